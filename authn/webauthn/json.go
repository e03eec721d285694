package webauthn

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Bytes is a byte string that JSON carries as unpadded base64url, as the
// WebAuthn Level 3 JSON forms do (Base64URLString). Decoding accepts
// padding too, which some libraries send.
type Bytes []byte

// MarshalJSON encodes b as unpadded base64url.
func (b Bytes) MarshalJSON() ([]byte, error) {
	return json.Marshal(base64.RawURLEncoding.EncodeToString(b))
}

// UnmarshalJSON decodes unpadded (or padded) base64url.
func (b *Bytes) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return errors.New("webauthn: want a base64url string")
	}
	for len(s) > 0 && s[len(s)-1] == '=' {
		s = s[:len(s)-1]
	}
	v, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return errors.New("webauthn: invalid base64url")
	}
	*b = v
	return nil
}

// CredentialParameter is PublicKeyCredentialParameters.
type CredentialParameter struct {
	Type string `json:"type"`
	Alg  int    `json:"alg"`
}

// CredentialDescriptor is PublicKeyCredentialDescriptorJSON.
type CredentialDescriptor struct {
	Type       string   `json:"type"`
	ID         Bytes    `json:"id"`
	Transports []string `json:"transports,omitempty"`
}

// CreationOptions is PublicKeyCredentialCreationOptionsJSON (WebAuthn
// §5.1.3 with Level 3's JSON form).
type CreationOptions struct {
	RP struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"rp"`
	User struct {
		ID          Bytes  `json:"id"`
		Name        string `json:"name"`
		DisplayName string `json:"displayName"`
	} `json:"user"`
	Challenge              Bytes                  `json:"challenge"`
	PubKeyCredParams       []CredentialParameter  `json:"pubKeyCredParams"`
	Timeout                int64                  `json:"timeout"`
	ExcludeCredentials     []CredentialDescriptor `json:"excludeCredentials"`
	AuthenticatorSelection struct {
		ResidentKey        string `json:"residentKey"`
		RequireResidentKey bool   `json:"requireResidentKey"`
		UserVerification   string `json:"userVerification"`
	} `json:"authenticatorSelection"`
	Attestation string `json:"attestation"`
}

// RequestOptions is PublicKeyCredentialRequestOptionsJSON.
type RequestOptions struct {
	Challenge        Bytes                  `json:"challenge"`
	Timeout          int64                  `json:"timeout"`
	RPID             string                 `json:"rpId"`
	AllowCredentials []CredentialDescriptor `json:"allowCredentials"`
	UserVerification string                 `json:"userVerification"`
}

// NewCreationOptions returns the options of a registration for rp, the
// user (handle, name, display name), a challenge and a timeout in
// milliseconds: a discoverable credential and user verification
// preferred, Algorithms, attestation "none", exclude excluded.
func (rp RelyingParty) NewCreationOptions(userID []byte, name, displayName string, challenge []byte, timeoutMs int64, exclude []CredentialDescriptor) *CreationOptions {
	o := &CreationOptions{Challenge: challenge, Timeout: timeoutMs, Attestation: "none", ExcludeCredentials: exclude}
	o.RP.ID, o.RP.Name = rp.ID, rp.Name
	o.User.ID, o.User.Name, o.User.DisplayName = userID, name, displayName
	for _, a := range Algorithms {
		o.PubKeyCredParams = append(o.PubKeyCredParams, CredentialParameter{Type: "public-key", Alg: a})
	}
	if o.ExcludeCredentials == nil {
		o.ExcludeCredentials = []CredentialDescriptor{}
	}
	o.AuthenticatorSelection.ResidentKey = "preferred"
	o.AuthenticatorSelection.UserVerification = "preferred"
	return o
}

// NewRequestOptions returns the options of a sign-in for rp: allow
// empty for a discoverable credential (usernameless), user verification
// preferred.
func (rp RelyingParty) NewRequestOptions(challenge []byte, timeoutMs int64, allow []CredentialDescriptor) *RequestOptions {
	if allow == nil {
		allow = []CredentialDescriptor{}
	}
	return &RequestOptions{Challenge: challenge, Timeout: timeoutMs, RPID: rp.ID, AllowCredentials: allow, UserVerification: "preferred"}
}

// RegistrationResponse is RegistrationResponseJSON, the parts a relying
// party reads.
type RegistrationResponse struct {
	ID       string `json:"id"`
	RawID    Bytes  `json:"rawId"`
	Type     string `json:"type"`
	Response struct {
		ClientDataJSON    Bytes    `json:"clientDataJSON"`
		AttestationObject Bytes    `json:"attestationObject"`
		Transports        []string `json:"transports"`
	} `json:"response"`
}

// AuthenticationResponse is AuthenticationResponseJSON, the parts a
// relying party reads.
type AuthenticationResponse struct {
	ID       string `json:"id"`
	RawID    Bytes  `json:"rawId"`
	Type     string `json:"type"`
	Response struct {
		ClientDataJSON    Bytes `json:"clientDataJSON"`
		AuthenticatorData Bytes `json:"authenticatorData"`
		Signature         Bytes `json:"signature"`
		UserHandle        Bytes `json:"userHandle"`
	} `json:"response"`
}

// MaxResponseBytes bounds the JSON of a registration or authentication
// response.
const MaxResponseBytes = 32 << 10

// ErrResponse is wrapped by every response decoding error.
var ErrResponse = errors.New("webauthn: invalid credential response")

// ParseRegistrationResponse decodes RegistrationResponseJSON: type
// "public-key", a rawId of 1 to MaxCredentialIDBytes bytes that id
// repeats, clientDataJSON and attestationObject, at most 8 transports.
func ParseRegistrationResponse(b []byte) (*RegistrationResponse, error) {
	var r RegistrationResponse
	if err := decodeResponse(b, &r); err != nil {
		return nil, err
	}
	if err := checkID(r.Type, r.ID, r.RawID); err != nil {
		return nil, err
	}
	if len(r.Response.ClientDataJSON) == 0 || len(r.Response.AttestationObject) == 0 {
		return nil, fmt.Errorf("%w: clientDataJSON and attestationObject are required", ErrResponse)
	}
	if len(r.Response.Transports) > 8 {
		return nil, fmt.Errorf("%w: too many transports", ErrResponse)
	}
	for _, t := range r.Response.Transports {
		if len(t) == 0 || len(t) > 32 {
			return nil, fmt.Errorf("%w: invalid transport", ErrResponse)
		}
	}
	return &r, nil
}

// ParseAuthenticationResponse decodes AuthenticationResponseJSON: type
// "public-key", a rawId as in ParseRegistrationResponse, clientDataJSON,
// authenticatorData and signature, and a user handle of at most 64 bytes.
func ParseAuthenticationResponse(b []byte) (*AuthenticationResponse, error) {
	var r AuthenticationResponse
	if err := decodeResponse(b, &r); err != nil {
		return nil, err
	}
	if err := checkID(r.Type, r.ID, r.RawID); err != nil {
		return nil, err
	}
	if len(r.Response.ClientDataJSON) == 0 || len(r.Response.AuthenticatorData) == 0 || len(r.Response.Signature) == 0 {
		return nil, fmt.Errorf("%w: clientDataJSON, authenticatorData and signature are required", ErrResponse)
	}
	if len(r.Response.UserHandle) > 64 {
		return nil, fmt.Errorf("%w: user handle longer than 64 bytes", ErrResponse)
	}
	return &r, nil
}

func decodeResponse(b []byte, v any) error {
	if len(b) > MaxResponseBytes {
		return fmt.Errorf("%w: %d bytes, at most %d", ErrResponse, len(b), MaxResponseBytes)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %v", ErrResponse, err)
	}
	return nil
}

func checkID(typ, id string, raw Bytes) error {
	if typ != "public-key" {
		return fmt.Errorf("%w: type %q, want public-key", ErrResponse, typ)
	}
	if len(raw) == 0 || len(raw) > MaxCredentialIDBytes {
		return fmt.Errorf("%w: rawId of %d bytes", ErrResponse, len(raw))
	}
	if id != base64.RawURLEncoding.EncodeToString(raw) {
		return fmt.Errorf("%w: id is not rawId in base64url", ErrResponse)
	}
	return nil
}
