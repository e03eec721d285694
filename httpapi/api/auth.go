package api

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
	"strongbox/authn/validation"
)

// authResult is the authentication result of §2.6, keys in PocketBase's
// order (meta, record, token; meta only for OAuth2). The record shows its
// email, and its hidden fields only when it is a superuser: PocketBase
// v0.31.0 answers as the signed-in record sees itself, whoever asked (a
// superuser's impersonation of a user too).
type authResult struct {
	Meta   any            `json:"meta,omitempty"`
	Record map[string]any `json:"record"`
	Token  string         `json:"token"`
}

// authCollection finds the auth collection named in the path. Most auth
// routes report a missing collection and a non-auth one differently;
// impersonate reports both as the latter (strictMissing false).
func (s *Server) authCollection(r *http.Request, strictMissing bool) (*authn.Collection, error) {
	c, ok := s.pathCollection(r)
	if !ok {
		if strictMissing {
			return nil, newError(http.StatusNotFound, msgNoCollection, nil)
		}
		return nil, newError(http.StatusNotFound, msgNoAuthCollection, nil)
	}
	if !c.IsAuth() {
		return nil, newError(http.StatusNotFound, msgNoAuthCollection, nil)
	}
	return c, nil
}

// closedWhen is how an auth route refuses a collection whose options close
// it: with status and msg when off holds.
type closedWhen struct {
	off    func(*authn.Collection) bool
	status int
	msg    string
}

func passwordAuthOff(c *authn.Collection) bool { return !c.PasswordAuth.Enabled }

// The refusals of the auth routes, as PocketBase v0.31.0 answers them.
var (
	loginPasswordOff   = closedWhen{passwordAuthOff, http.StatusForbidden, msgPasswordAuthOff}
	resetPasswordOff   = closedWhen{passwordAuthOff, http.StatusBadRequest, msgPasswordAuthOff} // 400 here, where login answers 403
	otpOff             = closedWhen{func(c *authn.Collection) bool { return !c.OTP.Enabled }, http.StatusForbidden, msgOTPOff}
	oauth2Off          = closedWhen{func(c *authn.Collection) bool { return !c.OAuth2.Enabled || c.IsSuperusers() }, http.StatusForbidden, msgOAuth2Off}
	superusersVerified = closedWhen{(*authn.Collection).IsSuperusers, http.StatusBadRequest, msgSuperusersVerified}
	superusersEmail    = closedWhen{(*authn.Collection).IsSuperusers, http.StatusBadRequest, msgSuperusersEmail}
)

// authBody is the start of the auth routes that name their collection in
// the path, in PocketBase's order: the auth collection (404), the route's
// refusal of it (none when closed.off is nil), then the body, bound.
func (s *Server) authBody(r *http.Request, closed closedWhen) (*authn.Collection, *body, error) {
	c, err := s.authCollection(r, true)
	if err != nil {
		return nil, nil, err
	}
	if closed.off != nil && closed.off(c) {
		return nil, nil, newError(closed.status, closed.msg, nil)
	}
	b, err := bind(r)
	if err != nil {
		return nil, nil, err
	}
	return c, b, nil
}

// mfaIDOf returns the mfaId of a sign-in: from the query string, else from
// the body, as PocketBase v0.31.0 reads it.
func mfaIDOf(r *http.Request, b *body) (string, error) {
	if id := query(r).Get("mfaId"); id != "" {
		return id, nil
	}
	return b.str("mfaId")
}

// msgMFARequired is the request log's error of a first factor that
// answered an mfaId (and the metrics' mfa_required outcome).
const msgMFARequired = "mfa required"

// signIn is the end of every sign-in by a login method (password, OTP,
// OAuth2, or TOTP as a second factor) whose factor passed: authn.Store.SignIn decides, and this
// renders its outcome. A completed sign-in answers the §2.6 result, with
// meta (OAuth2's; nil leaves it out); a first factor on a collection with
// MFA answers 401 with exactly {"mfaId": …}, after its effects (an OAuth2
// record created or linked) have happened, as in PocketBase. body is
// the sign-in request's, which the authRule may read (@request.body.*).
func (s *Server) signIn(w http.ResponseWriter, r *http.Request, c *authn.Collection, rec *authn.Record, body map[string]any, method, mfaID string, meta any) error {
	st := stateOf(r)
	out, err := s.auth.SignIn(r.Context(), authn.SignIn{Collection: c, Record: rec, Method: method, MFAID: mfaID, Superuser: st.isSuperuser(),
		Request: ruleRequest(r, body, method), Origin: authn.Fingerprint(st.ip, r.UserAgent())})
	if err != nil {
		return signInError(err)
	}
	if out.MFAID != "" {
		// Not through writeJSON: ?fields= prunes successes only.
		s.writeBody(w, http.StatusUnauthorized, struct {
			MFAID string `json:"mfaId"`
		}{out.MFAID})
		// The request log records the challenge as PocketBase does.
		st.err = newError(http.StatusUnauthorized, msgMFARequired, nil)
		return nil
	}
	if out.Alert {
		s.log.Info("sign-in from a new location: alert mailed", "collection", c.Name, "record", rec.ID, "method", strings.Join(out.Methods, "+"))
		s.sendAuthAlert(r, c, rec, strings.Join(out.Methods, "+"))
	}
	return writeJSON(w, r, http.StatusOK, authResult{Meta: meta, Record: rec.Public(c, true, c.IsSuperusers()), Token: out.Token})
}

// sendAuthAlert queues the collection's authAlert mail to rec's email, as
// PocketBase v0.31.0 sends it after a sign-in from a new location: the
// template with {APP_NAME}, {APP_URL} and the record's fields, and
// strongbox's {AUTH_METHOD}: the methods of the sign-in, such as
// "password+totp" (PocketBase's default template does not use it; a
// template may). The sign-in does not wait for it, and a mail that cannot
// be queued is logged and does not fail the sign-in, as in PocketBase.
func (s *Server) sendAuthAlert(r *http.Request, c *authn.Collection, rec *authn.Record, methods string) {
	m := s.renderMail(c, rec, c.AuthAlert.EmailTemplate, rec.Email, map[string]string{mail.VarAuthMethod: methods})
	_ = s.sendFlowMail(r, "login alert", c, rec, m) // logged there
}

// signInError is the answer to a sign-in authn.Store.SignIn refused or
// could not complete.
func signInError(err error) error {
	switch {
	case errors.Is(err, authn.ErrAuthRule):
		return errForbidden(msgAuthRuleFailed)
	case errors.Is(err, authn.ErrMFARule):
		// A rule that cannot be evaluated fails the sign-in, as in PocketBase.
		return errBadRequest(msgAuthFailed, err)
	case errors.Is(err, authn.ErrMFABegin):
		return newError(http.StatusInternalServerError, msgMFACreateFailed, err)
	case errors.Is(err, authn.ErrMFAInvalid):
		return errBadRequest(msgMFAInvalid, err)
	case errors.Is(err, authn.ErrMFAOtherRecord):
		return errBadRequest(msgMFAOtherRecord, err)
	case errors.Is(err, authn.ErrMFASameMethod), errors.Is(err, authn.ErrMFAFactor):
		return errBadRequest(msgMFASameMethod, err)
	case errors.Is(err, authn.ErrTokenIssue):
		return newError(http.StatusInternalServerError, "Failed to create auth token.", err)
	}
	return err
}

// handleAuthWithPassword handles POST /api/collections/{collection}/auth-with-password.
func (s *Server) handleAuthWithPassword(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, loginPasswordOff)
	if err != nil {
		return err
	}
	identity, err := b.str("identity")
	if err != nil {
		return err
	}
	password, err := b.str("password")
	if err != nil {
		return err
	}
	identityField, err := b.str("identityField")
	if err != nil {
		return err
	}
	mfaID, err := mfaIDOf(r, b)
	if err != nil {
		return err
	}
	data := validation.Errors{}
	checkLen := func(key, v string, required bool) {
		if v == "" {
			if required {
				data[key] = validation.Required()
			}
		} else if len(v) > 255 {
			data[key] = validation.LengthOutOfRange(1, 255)
		}
	}
	checkLen("identity", identity, true)
	checkLen("password", password, true)
	checkLen("identityField", identityField, false)
	if identityField != "" && data["identityField"] == nil && !slices.Contains(c.PasswordAuth.IdentityFields, identityField) {
		data["identityField"] = validation.InInvalid(nil)
	}
	if len(data) > 0 {
		return errValidation(msgValidationFailed, data)
	}
	attempt, err := s.beginLogin(r, c, identity)
	if err != nil {
		return err
	}
	defer attempt.abandon()
	rec, err := s.auth.AuthWithPassword(r.Context(), c, identity, identityField, password)
	attempt.end(err)
	if errors.Is(err, authn.ErrAuthFailed) {
		return errBadRequest(msgAuthFailed, err)
	}
	if err != nil {
		return err
	}
	return s.signIn(w, r, c, rec, b.vals, authn.MethodPassword, mfaID, nil)
}

// handleAuthRefresh handles POST /api/collections/{collection}/auth-refresh.
// A refreshable token is exchanged for a new one; any other valid token
// (impersonation) comes back unchanged.
func (s *Server) handleAuthRefresh(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	token, err := s.auth.Refresh(r.Context(), authn.Refresh{Collection: c, Record: st.rec, Token: st.token, Claims: st.claims, Superuser: st.isSuperuser(),
		Request: ruleRequest(r, nil, authn.ContextDefault)})
	if errors.Is(err, authn.ErrTokenIssue) {
		return newError(http.StatusInternalServerError, "Failed to refresh auth token.", err)
	}
	if err != nil {
		return signInError(err)
	}
	return writeJSON(w, r, http.StatusOK, authResult{Record: st.rec.Public(c, true, c.IsSuperusers()), Token: token})
}

// authMethods is the auth methods descriptor of §2.7 in PocketBase's key
// order, legacy keys included for older SDKs.
type authMethods struct {
	Password struct {
		IdentityFields []string `json:"identityFields"`
		Enabled        bool     `json:"enabled"`
	} `json:"password"`
	OAuth2 struct {
		Providers []any `json:"providers"`
		Enabled   bool  `json:"enabled"`
	} `json:"oauth2"`
	MFA struct {
		Enabled  bool  `json:"enabled"`
		Duration int64 `json:"duration"`
	} `json:"mfa"`
	OTP struct {
		Enabled  bool  `json:"enabled"`
		Duration int64 `json:"duration"`
	} `json:"otp"`
	// TOTP is strongbox's own (authenticator apps, second factor only).
	TOTP struct {
		Enabled bool `json:"enabled"`
	} `json:"totp"`
	Passkey struct {
		Enabled bool `json:"enabled"`
	} `json:"passkey"`
	AuthProviders    []any `json:"authProviders"`
	UsernamePassword bool  `json:"usernamePassword"`
	EmailPassword    bool  `json:"emailPassword"`
}

// handleAuthMethods handles GET /api/collections/{collection}/auth-methods.
func (s *Server) handleAuthMethods(w http.ResponseWriter, r *http.Request) error {
	c, err := s.authCollection(r, true)
	if err != nil {
		return err
	}
	var m authMethods
	m.Password.IdentityFields = []string{}
	m.OAuth2.Providers = []any{}
	if c.PasswordAuth.Enabled {
		m.Password.Enabled = true
		m.Password.IdentityFields = c.PasswordAuth.IdentityFields
		m.UsernamePassword = slices.Contains(c.PasswordAuth.IdentityFields, "username")
		m.EmailPassword = slices.Contains(c.PasswordAuth.IdentityFields, "email")
	}
	if c.MFA.Enabled {
		m.MFA.Enabled, m.MFA.Duration = true, c.MFA.Duration
	}
	if c.OTP.Enabled {
		m.OTP.Enabled, m.OTP.Duration = true, c.OTP.Duration
	}
	m.TOTP.Enabled = c.TOTP.Enabled
	m.Passkey.Enabled = c.Passkey.Enabled
	if c.OAuth2.Enabled && !c.IsSuperusers() {
		if m.OAuth2.Providers, err = s.oauth2Providers(c); err != nil {
			return err
		}
		m.OAuth2.Enabled = true
		m.AuthProviders = m.OAuth2.Providers
	}
	return writeJSON(w, r, http.StatusOK, m)
}

// handleImpersonate handles POST /api/collections/{collection}/impersonate/{id}:
// a superuser obtains a non-refreshable auth token for any auth record.
func (s *Server) handleImpersonate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	c, err := s.authCollection(r, false)
	if err != nil {
		return err
	}
	rec, ok := s.auth.Record(c, r.PathValue("id"))
	if !ok {
		return errNotFound(nil)
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	seconds, err := b.int64("duration")
	if err != nil {
		return err
	}
	if seconds < 0 {
		return errValidation(msgValidationFailed, validation.Errors{
			"duration": validation.MinGreaterEqual(0),
		})
	}
	if seconds > authn.MaxTokenDuration {
		seconds = authn.MaxTokenDuration
	}
	token, err := s.auth.NewAuthToken(c, rec, false, time.Duration(seconds)*time.Second)
	if err != nil {
		return newError(http.StatusInternalServerError, "Failed to create auth token.", err)
	}
	return writeJSON(w, r, http.StatusOK, authResult{Record: rec.Public(c, true, c.IsSuperusers()), Token: token})
}

// handleFileToken handles POST /api/files/token.
func (s *Server) handleFileToken(w http.ResponseWriter, r *http.Request) error {
	if err := requireAuth(r); err != nil {
		return err
	}
	st := stateOf(r)
	token, err := s.auth.NewFileToken(st.col, st.rec)
	if err != nil {
		return newError(http.StatusInternalServerError, "Failed to generate file token.", err)
	}
	return writeJSON(w, r, http.StatusOK, struct {
		Token string `json:"token"`
	}{token})
}

// handleHealth handles GET /api/health.
func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) error {
	type health struct {
		Message string         `json:"message"`
		Code    int            `json:"code"`
		Data    map[string]any `json:"data"`
	}
	h := health{Message: "API is healthy.", Code: http.StatusOK, Data: map[string]any{}}
	if stateOf(r).isSuperuser() {
		// The client's address as the request log and the rate limits
		// see it: through the trusted proxy headers, if any.
		h.Data = map[string]any{"canBackup": s.canBackup(), "possibleProxyHeader": "", "realIP": stateOf(r).ip}
	}
	// PocketBase's health is always 200. A store that cannot save
	// changes is reported the only way a monitor or a load balancer reads
	// without parsing: 503, with data.degraded naming the stores, until
	// it recovers. The healthy response keeps PocketBase's shape.
	if degraded, full := s.storageHealth(); len(degraded) > 0 {
		h.Code, h.Message = http.StatusServiceUnavailable, "API is degraded: storage is failing."
		if full {
			h.Message = "API is degraded: storage is full."
		}
		h.Data["degraded"] = degraded
	}
	return writeJSON(w, r, h.Code, h)
}

// ownAuthCollection is the check of the routes that act on the signed-in
// record within its own collection (auth-refresh, request-email-change),
// in PocketBase's order: the path's collection exists (404), a record
// is signed in (401), the collection is an auth one (404), and the token is
// of that collection (403).
func (s *Server) ownAuthCollection(r *http.Request) (*authn.Collection, *state, error) {
	c, ok := s.pathCollection(r)
	if !ok {
		return nil, nil, newError(http.StatusNotFound, msgNoCollection, nil)
	}
	st := stateOf(r)
	if st.rec == nil {
		return nil, nil, errUnauthorized()
	}
	if !c.IsAuth() {
		return nil, nil, newError(http.StatusNotFound, msgNoAuthCollection, nil)
	}
	if st.col.ID != c.ID {
		return nil, nil, errForbidden("The request requires auth record from " + st.col.Name + " collection.")
	}
	return c, st, nil
}
