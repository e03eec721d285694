package authn

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"slices"
	"time"
)

// Collection types.
const (
	TypeAuth = "auth"
	// TypeBase collections cannot be created any more, but a data dir
	// an older version wrote may hold some: they open, and their records
	// are not served.
	TypeBase = "base"
	typeView = "view" // PocketBase's; never stored
)

// Names and ids of the collections every data dir starts with. The ids are
// the ones PocketBase uses, so clients that hard-code them keep working.
const (
	SuperusersName = "_superusers"
	SuperusersID   = "pbc_3142635823"
	UsersName      = "users"
	UsersID        = "_pb_users_auth_"
)

// OwnerRule is the rule of the default users collection: the
// authenticated record is the record itself.
const OwnerRule = "id = @request.auth.id"

// Collection is a collection's definition. Base collections only have the
// common part; auth collections carry *AuthOptions, whose fields are reported
// flat next to the common ones, as PocketBase does.
type Collection struct {
	ID         string   `json:"id"`
	ListRule   *string  `json:"listRule"`
	ViewRule   *string  `json:"viewRule"`
	CreateRule *string  `json:"createRule"`
	UpdateRule *string  `json:"updateRule"`
	DeleteRule *string  `json:"deleteRule"`
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Fields     []Field  `json:"fields"`
	Indexes    []string `json:"indexes"`
	Created    Time     `json:"created"`
	Updated    Time     `json:"updated"`
	System     bool     `json:"system"`
	*AuthOptions
}

// AuthOptions are the options of an auth collection, with PocketBase's names.
type AuthOptions struct {
	AuthRule                   *string      `json:"authRule"`
	ManageRule                 *string      `json:"manageRule"`
	AuthAlert                  AuthAlert    `json:"authAlert"`
	OAuth2                     OAuth2       `json:"oauth2"`
	PasswordAuth               PasswordAuth `json:"passwordAuth"`
	MFA                        MFA          `json:"mfa"`
	OTP                        OTP          `json:"otp"`
	TOTP                       TOTP         `json:"totp"`
	Passkey                    PasskeyAuth  `json:"passkey"`
	AuthToken                  TokenConfig  `json:"authToken"`
	PasswordResetToken         TokenConfig  `json:"passwordResetToken"`
	EmailChangeToken           TokenConfig  `json:"emailChangeToken"`
	VerificationToken          TokenConfig  `json:"verificationToken"`
	FileToken                  TokenConfig  `json:"fileToken"`
	VerificationTemplate       Template     `json:"verificationTemplate"`
	ResetPasswordTemplate      Template     `json:"resetPasswordTemplate"`
	ConfirmEmailChangeTemplate Template     `json:"confirmEmailChangeTemplate"`
}

// AuthAlert configures the new-location login alert mail.
type AuthAlert struct {
	Enabled       bool     `json:"enabled"`
	EmailTemplate Template `json:"emailTemplate"`
}

// OAuth2 configures OAuth2 sign-in (interface §4.5): the providers, and the
// record fields a sign-up through OAuth2 fills.
type OAuth2 struct {
	Providers    []Provider   `json:"providers"`
	MappedFields MappedFields `json:"mappedFields"`
	Enabled      bool         `json:"enabled"`
}

// Provider is one OAuth2 provider's configuration. ClientSecret is stored
// but never reported.
type Provider struct {
	PKCE         *bool           `json:"pkce"`
	Name         string          `json:"name"`
	ClientID     string          `json:"clientId"`
	ClientSecret string          `json:"clientSecret,omitempty"`
	AuthURL      string          `json:"authURL"`
	TokenURL     string          `json:"tokenURL"`
	UserInfoURL  string          `json:"userInfoURL"`
	DisplayName  string          `json:"displayName"`
	Extra        json.RawMessage `json:"extra"`
}

// MappedFields names the record fields OAuth2 sign-up fills.
type MappedFields struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Username  string `json:"username"`
	AvatarURL string `json:"avatarURL"`
}

// PasswordAuth configures identity + password sign-in.
type PasswordAuth struct {
	Enabled        bool     `json:"enabled"`
	IdentityFields []string `json:"identityFields"`
}

// MFA configures multi-factor authentication.
type MFA struct {
	Enabled  bool   `json:"enabled"`
	Duration int64  `json:"duration"` // seconds
	Rule     string `json:"rule"`
}

// OTP configures one-time passwords sent by mail.
type OTP struct {
	Enabled       bool     `json:"enabled"`
	Duration      int64    `json:"duration"` // seconds
	Length        int      `json:"length"`
	EmailTemplate Template `json:"emailTemplate"`
}

// TokenConfig is the lifetime of one token type and the secret it is signed
// with. Secret is stored in the data dir and never reported. Duration 0 is
// allowed only for the authToken of the users collection, whose password
// tokens then do not expire (§5.9 of the interface document; see
// staticAllowed); every other duration is MinTokenDuration to
// MaxTokenDuration.
type TokenConfig struct {
	Duration int64  `json:"duration"` // seconds
	Secret   string `json:"secret,omitempty"`
}

// Template is a mail template.
type Template struct {
	Subject string `json:"subject"`
	Body    string `json:"body"`
}

// Token duration bounds, in seconds (PocketBase's range).
const (
	MinTokenDuration = 10
	MaxTokenDuration = 94670856 // about three years
)

// Time is a timestamp that marshals as "YYYY-MM-DD HH:MM:SS.mmmZ" in UTC, or
// "" when zero.
type Time struct{ time.Time }

// DateLayout is the layout of every date strongbox reports.
const DateLayout = "2006-01-02 15:04:05.000Z"

// MarshalJSON implements json.Marshaler.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte(`""`), nil
	}
	return []byte(`"` + t.UTC().Format(DateLayout) + `"`), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s == "" {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(DateLayout, s)
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// String returns the timestamp in DateLayout.
func (t Time) String() string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(DateLayout)
}

// Token returns the configuration of token type typ.
func (o *AuthOptions) Token(typ TokenType) *TokenConfig {
	switch typ {
	case TokenAuth:
		return &o.AuthToken
	case TokenFile:
		return &o.FileToken
	case TokenVerification:
		return &o.VerificationToken
	case TokenPasswordReset:
		return &o.PasswordResetToken
	case TokenEmailChange:
		return &o.EmailChangeToken
	}
	return nil
}

// IsAuth reports whether c is an auth collection.
func (c *Collection) IsAuth() bool { return c.Type == TypeAuth && c.AuthOptions != nil }

// IsSuperusers reports whether c is the _superusers collection.
func (c *Collection) IsSuperusers() bool { return c.ID == SuperusersID }

// Field returns the field named name, or nil.
func (c *Collection) Field(name string) *Field {
	for i := range c.Fields {
		if c.Fields[i].Name == name {
			return &c.Fields[i]
		}
	}
	return nil
}

// Public returns a deep copy of c without secrets, for reporting.
func (c *Collection) Public() *Collection {
	p := c.clone()
	if p.AuthOptions != nil {
		for _, typ := range TokenTypes {
			p.Token(typ).Secret = ""
		}
		for i := range p.OAuth2.Providers {
			p.OAuth2.Providers[i].ClientSecret = ""
		}
	}
	return p
}

// clone returns a deep copy of c through its stored form, which holds every
// field including secrets.
func (c *Collection) clone() *Collection {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("authn: marshal collection: %v", err)) // all fields are marshalable
	}
	var p Collection
	if err := json.Unmarshal(b, &p); err != nil {
		panic(fmt.Sprintf("authn: unmarshal collection: %v", err))
	}
	return &p
}

func strp(s string) *string { return &s }

// fieldID returns a stable field id in PocketBase's style: the type followed
// by a checksum of the name.
func fieldID(typ, name string) string {
	return fmt.Sprintf("%s%d", typ, crc32.ChecksumIEEE([]byte(name)))
}

// systemAuthFields returns the fields every auth collection has.
func systemAuthFields() []Field {
	return []Field{
		{Name: "id", Type: FieldText, System: true, Required: true, PrimaryKey: true, Min: 15, Max: 15, Pattern: "^[a-z0-9]+$", AutogeneratePattern: "[a-z0-9]{15}"},
		{Name: "password", Type: FieldPassword, System: true, Hidden: true, Required: true, Min: MinPasswordRunes},
		{Name: "tokenKey", Type: FieldText, System: true, Hidden: true, Required: true, Min: 30, Max: 60, AutogeneratePattern: "[a-zA-Z0-9]{50}"},
		{Name: "email", Type: FieldEmail, System: true, Required: true},
		{Name: "emailVisibility", Type: FieldBool, System: true},
		{Name: "verified", Type: FieldBool, System: true},
	}
}

func autodateFields() []Field {
	return []Field{
		{Name: "created", Type: FieldAutodate, OnCreate: true},
		{Name: "updated", Type: FieldAutodate, OnCreate: true, OnUpdate: true},
	}
}

// The default mail templates are PocketBase's (the authAlert body as
// v0.31.0 reports it): a client that reads a new collection's options sees
// the same text, and an edited template keeps the same placeholders. The
// bodies are HTML; mail.Render fills them.
var (
	tmplAlert = Template{"Login from a new location", `<p>Hello,</p>
<p>We noticed a login to your {APP_NAME} account from a new location.</p>
<p>If this was you, you may disregard this email.</p>
<p><strong>If this wasn't you, you should immediately change your {APP_NAME} account password to revoke access from all other locations.</strong></p>
<p>
  Thanks,<br/>
  {APP_NAME} team
</p>`}
	tmplOTP = Template{"OTP for {APP_NAME}", `<p>Hello,</p>
<p>Your one-time password is: <strong>{OTP}</strong></p>
<p><i>If you didn't ask for the one-time password, you can ignore this email.</i></p>
<p>
  Thanks,<br/>
  {APP_NAME} team
</p>`}
	tmplVerification = Template{"Verify your {APP_NAME} email", `<p>Hello,</p>
<p>Thank you for joining us at {APP_NAME}.</p>
<p>Click on the button below to verify your email address.</p>
<p>
  <a class="btn" href="{APP_URL}/_/#/auth/confirm-verification/{TOKEN}" target="_blank" rel="noopener">Verify</a>
</p>
<p>
  Thanks,<br/>
  {APP_NAME} team
</p>`}
	tmplReset = Template{"Reset your {APP_NAME} password", `<p>Hello,</p>
<p>Click on the button below to reset your password.</p>
<p>
  <a class="btn" href="{APP_URL}/_/#/auth/confirm-password-reset/{TOKEN}" target="_blank" rel="noopener">Reset password</a>
</p>
<p><i>If you didn't ask to reset your password, you can ignore this email.</i></p>
<p>
  Thanks,<br/>
  {APP_NAME} team
</p>`}
	tmplEmailChange = Template{"Confirm your {APP_NAME} new email address", `<p>Hello,</p>
<p>Click on the button below to confirm your new email address.</p>
<p>
  <a class="btn" href="{APP_URL}/_/#/auth/confirm-email-change/{TOKEN}" target="_blank" rel="noopener">Confirm new email</a>
</p>
<p><i>If you didn't ask to change your email address, you can ignore this email.</i></p>
<p>
  Thanks,<br/>
  {APP_NAME} team
</p>`}
)

// defaultAuthOptions returns the options of a new auth collection, with fresh
// secrets drawn from rnd. authDuration is the auth token lifetime in seconds.
func defaultAuthOptions(rnd *Random, authDuration int64) (*AuthOptions, error) {
	o := &AuthOptions{
		AuthRule:     strp(""),
		AuthAlert:    AuthAlert{Enabled: true, EmailTemplate: tmplAlert},
		OAuth2:       OAuth2{Providers: []Provider{}},
		PasswordAuth: PasswordAuth{Enabled: true, IdentityFields: []string{"email"}},
		MFA:          MFA{Duration: 1800},
		OTP:          OTP{Duration: 180, Length: 8, EmailTemplate: tmplOTP},
		AuthToken:    TokenConfig{Duration: authDuration},

		PasswordResetToken:         TokenConfig{Duration: 1800},
		EmailChangeToken:           TokenConfig{Duration: 1800},
		VerificationToken:          TokenConfig{Duration: 259200},
		FileToken:                  TokenConfig{Duration: 180},
		VerificationTemplate:       tmplVerification,
		ResetPasswordTemplate:      tmplReset,
		ConfirmEmailChangeTemplate: tmplEmailChange,
	}
	for _, typ := range TokenTypes {
		s, err := rnd.String(secretAlphabet, 50)
		if err != nil {
			return nil, err
		}
		o.Token(typ).Secret = s
	}
	return o, nil
}

// markSuperusersDates marks the created and updated fields of the
// _superusers collection c system fields, as PocketBase's are (those of
// other auth collections are not). Applied to every stored version of
// the collection, so that data dirs made before it read the same.
func markSuperusersDates(c *Collection) {
	for i := range c.Fields {
		if f := &c.Fields[i]; f.Type == FieldAutodate && (f.Name == "created" || f.Name == "updated") {
			f.System = true
		}
	}
}

// newSuperusersCollection returns the _superusers collection.
func newSuperusersCollection(rnd *Random, now time.Time) (*Collection, error) {
	opts, err := defaultAuthOptions(rnd, 86400)
	if err != nil {
		return nil, err
	}
	c := &Collection{
		ID: SuperusersID, Name: SuperusersName, Type: TypeAuth, System: true,
		Fields:  append(systemAuthFields(), autodateFields()...),
		Indexes: authIndexes(SuperusersID, SuperusersName),
		Created: Time{now}, Updated: Time{now},
		AuthOptions: opts,
	}
	markSuperusersDates(c)
	c.assignFieldIDs()
	return c, nil
}

// newUsersCollection returns the default users collection. Its password
// tokens do not expire (§5.9 of the interface document): AuthToken.Duration
// is 0 until a superuser sets one.
func newUsersCollection(rnd *Random, now time.Time) (*Collection, error) {
	opts, err := defaultAuthOptions(rnd, 0)
	if err != nil {
		return nil, err
	}
	opts.OAuth2.MappedFields = MappedFields{Name: "name", AvatarURL: "avatar"}
	owner := strp(OwnerRule)
	fields := append(systemAuthFields(),
		Field{Name: "name", Type: FieldText, Max: 255},
		Field{Name: "avatar", Type: FieldFile, MaxSelect: 1, MimeTypes: []string{"image/jpeg", "image/png", "image/svg+xml", "image/gif", "image/webp"}},
	)
	c := &Collection{
		ID: UsersID, Name: UsersName, Type: TypeAuth,
		ListRule: owner, ViewRule: strp(OwnerRule), CreateRule: strp(""), UpdateRule: strp(OwnerRule), DeleteRule: strp(OwnerRule),
		Fields:  append(fields, autodateFields()...),
		Indexes: authIndexes(UsersID, UsersName),
		Created: Time{now}, Updated: Time{now},
		AuthOptions: opts,
	}
	c.assignFieldIDs()
	return c, nil
}

func authIndexes(id, name string) []string {
	return []string{
		fmt.Sprintf("CREATE UNIQUE INDEX `idx_tokenKey_%s` ON `%s` (`tokenKey`)", id, name),
		fmt.Sprintf("CREATE UNIQUE INDEX `idx_email_%s` ON `%s` (`email`) WHERE `email` != ''", id, name),
	}
}

func (c *Collection) assignFieldIDs() {
	for i := range c.Fields {
		if c.Fields[i].ID == "" {
			c.Fields[i].ID = fieldID(c.Fields[i].Type, c.Fields[i].Name)
		}
	}
}

// identityFields returns the fields password login looks an identity up in,
// email first as PocketBase does.
func (c *Collection) identityFields() []string {
	f := c.PasswordAuth.IdentityFields
	if i := slices.Index(f, "email"); i > 0 {
		f = append([]string{"email"}, slices.Delete(slices.Clone(f), i, i+1)...)
	}
	return f
}
