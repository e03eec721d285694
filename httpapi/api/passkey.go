package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"strongbox/authn"
	"strongbox/authn/validation"
	"strongbox/authn/webauthn"
)

// Messages of the passkey routes (strongbox's own: PocketBase has no
// passkeys).
const (
	msgPasskeyOff       = "The collection is not configured to allow passkey authentication."
	msgPasskeyAppURL    = "Passkeys need the setting meta.appURL to be an http or https URL whose host is a domain name (not an IP address)."
	msgPasskeyChallenge = "Invalid or expired passkey challenge."
	msgPasskeyInvalid   = "Invalid passkey."
	msgPasskeyExists    = "The passkey is already registered."
	msgPasskeyLimit     = "The record has too many passkeys."
)

var passkeyOff = closedWhen{func(c *authn.Collection) bool { return !c.Passkey.Enabled }, http.StatusForbidden, msgPasskeyOff}

// relyingParty is the relying party of the ceremonies: the host of the
// settings' meta.appURL and its origin (webauthn.NewRelyingParty); an
// app URL that cannot name one is a 400 naming the setting.
func (s *Server) relyingParty() (webauthn.RelyingParty, error) {
	meta := s.settings.Get().Meta
	rp, err := webauthn.NewRelyingParty(meta.AppURL, meta.AppName)
	if err != nil {
		return rp, errBadRequest(msgPasskeyAppURL, err)
	}
	return rp, nil
}

// ownPasskeyCollection starts the routes of a record's own passkeys: its
// collection and token (ownAuthCollection), passkeys enabled, the relying
// party.
func (s *Server) ownPasskeyCollection(r *http.Request) (*authn.Collection, *state, webauthn.RelyingParty, error) {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return nil, nil, webauthn.RelyingParty{}, err
	}
	if !c.Passkey.Enabled {
		return nil, nil, webauthn.RelyingParty{}, errForbidden(msgPasskeyOff)
	}
	rp, err := s.relyingParty()
	return c, st, rp, err
}

// ceremonyOptions is the answer of the options routes.
type ceremonyOptions struct {
	ChallengeID string `json:"challengeId"`
	PublicKey   any    `json:"publicKey"`
}

// handlePasskeyRegisterOptions handles POST
// /api/collections/{collection}/passkeys/register/options: the creation
// options for a new passkey of the signed-in record.
func (s *Server) handlePasskeyRegisterOptions(w http.ResponseWriter, r *http.Request) error {
	c, st, rp, err := s.ownPasskeyCollection(r)
	if err != nil {
		return err
	}
	id, opts, err := s.auth.PasskeyRegisterOptions(c, st.rec, rp)
	if err != nil {
		return passkeyError(err)
	}
	return writeJSON(w, r, http.StatusOK, ceremonyOptions{id, opts})
}

// passkeyView is a passkey as the API reports it.
type passkeyView struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Created    authn.Time `json:"created"`
	LastUsed   string     `json:"lastUsed"`
	Alg        int        `json:"alg"`
	Transports []string   `json:"transports"`
}

func viewPasskey(p *authn.Passkey) passkeyView {
	v := passkeyView{ID: p.ID, Name: p.Name, Created: authn.Time{Time: p.Created}, Alg: p.Alg, Transports: p.Transports}
	if !p.LastUsed.IsZero() {
		v.LastUsed = authn.Time{Time: p.LastUsed}.String()
	}
	if v.Transports == nil {
		v.Transports = []string{}
	}
	return v
}

// handlePasskeyRegister handles POST
// /api/collections/{collection}/passkeys/register {"challengeId",
// "credential", "name"}: 200 {"id", "name", "created"} once the
// registration response verifies.
func (s *Server) handlePasskeyRegister(w http.ResponseWriter, r *http.Request) error {
	c, st, rp, err := s.ownPasskeyCollection(r)
	if err != nil {
		return err
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	challengeID, raw, err := ceremonyBody(b)
	if err != nil {
		return err
	}
	name, err := b.str("name")
	if err != nil {
		return err
	}
	if len(name) > authn.MaxPasskeyNameBytes {
		return errValidation(msgValidationFailed, validation.Errors{"name": validation.LengthOutOfRange(0, authn.MaxPasskeyNameBytes)})
	}
	resp, err := webauthn.ParseRegistrationResponse(raw)
	if err != nil {
		return errValidation(msgValidationFailed, validation.Errors{"credential": validation.New(validation.CodeInvalidValue, "Invalid registration response.")})
	}
	p, err := s.auth.RegisterPasskey(c, st.rec, rp, challengeID, resp, name)
	if err != nil {
		return passkeyError(err)
	}
	v := viewPasskey(p)
	return writeJSON(w, r, http.StatusOK, struct {
		ID      string     `json:"id"`
		Name    string     `json:"name"`
		Created authn.Time `json:"created"`
	}{v.ID, v.Name, v.Created})
}

// handlePasskeysList handles GET /api/collections/{collection}/passkeys:
// the signed-in record's passkeys, oldest first.
func (s *Server) handlePasskeysList(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	out := []passkeyView{}
	for _, p := range s.auth.Passkeys(c, st.rec.ID) {
		out = append(out, viewPasskey(p))
	}
	return writeJSON(w, r, http.StatusOK, out)
}

// handlePasskeyDelete handles DELETE
// /api/collections/{collection}/passkeys/{id}: 204, or 404 when the
// signed-in record has no such passkey.
func (s *Server) handlePasskeyDelete(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	if err := s.auth.DeletePasskey(c, st.rec.ID, r.PathValue("id")); err != nil {
		if errors.Is(err, authn.ErrNotFound) {
			return errNotFound(err)
		}
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// handleAuthWithPasskeyOptions handles POST
// /api/collections/{collection}/auth-with-passkey/options {"identity"?}:
// the request options of a sign-in, usernameless without identity, and
// of the same shape whether the identity has an account or not.
func (s *Server) handleAuthWithPasskeyOptions(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, passkeyOff)
	if err != nil {
		return err
	}
	identity, err := b.str("identity")
	if err != nil {
		return err
	}
	if len(identity) > 255 {
		return errValidation(msgValidationFailed, validation.Errors{"identity": validation.LengthOutOfRange(0, 255)})
	}
	rp, err := s.relyingParty()
	if err != nil {
		return err
	}
	id, opts, err := s.auth.PasskeyRequestOptions(c, identity, rp)
	if err != nil {
		return passkeyError(err)
	}
	return writeJSON(w, r, http.StatusOK, ceremonyOptions{id, opts})
}

// handleAuthWithPasskey handles POST
// /api/collections/{collection}/auth-with-passkey?mfaId= {"challengeId",
// "credential"}: the §2.6 auth result, or 401 {"mfaId"} when MFA asks
// for another method (a passkey is one method, "passkey").
func (s *Server) handleAuthWithPasskey(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, passkeyOff)
	if err != nil {
		return err
	}
	challengeID, raw, err := ceremonyBody(b)
	if err != nil {
		return err
	}
	mfaID, err := mfaIDOf(r, b)
	if err != nil {
		return err
	}
	resp, err := webauthn.ParseAuthenticationResponse(raw)
	if err != nil {
		return errValidation(msgValidationFailed, validation.Errors{"credential": validation.New(validation.CodeInvalidValue, "Invalid authentication response.")})
	}
	rp, err := s.relyingParty()
	if err != nil {
		return err
	}
	rec, err := s.auth.AuthWithPasskey(c, rp, challengeID, resp)
	if err != nil {
		return passkeyError(err)
	}
	return s.signIn(w, r, c, rec, b.vals, authn.MethodPasskey, mfaID, nil)
}

// ceremonyBody returns the challengeId (1 to 255 bytes) and the
// credential (a JSON object) of a ceremony's body, re-encoded for
// package webauthn to decode.
func ceremonyBody(b *body) (string, []byte, error) {
	challengeID, err := b.str("challengeId")
	if err != nil {
		return "", nil, err
	}
	data := validation.Errors{}
	switch {
	case challengeID == "":
		data["challengeId"] = validation.Required()
	case len(challengeID) > 255:
		data["challengeId"] = validation.LengthOutOfRange(1, 255)
	}
	cred, ok := b.vals["credential"].(map[string]any)
	if !ok {
		data["credential"] = validation.Required()
	}
	if len(data) > 0 {
		return "", nil, errValidation(msgValidationFailed, data)
	}
	raw, err := json.Marshal(cred)
	if err != nil {
		return "", nil, errBadRequest(msgLoadFailed, err)
	}
	return challengeID, raw, nil
}

// passkeyError is the answer to a refusal of the store's passkey calls.
// Every refusal of a credential (unknown, another record's, failing a
// check, a counter that went back) is the same 400, so that a sign-in
// tells nothing more; the store logs which it was.
func passkeyError(err error) error {
	switch {
	case errors.Is(err, authn.ErrPasskeyOff):
		return errForbidden(msgPasskeyOff)
	case errors.Is(err, authn.ErrPasskeyChallenge):
		return errBadRequest(msgPasskeyChallenge, err)
	case errors.Is(err, authn.ErrPasskeyInvalid), errors.Is(err, authn.ErrPasskeyCounter):
		return errBadRequest(msgPasskeyInvalid, err)
	case errors.Is(err, authn.ErrPasskeyExists):
		return errBadRequest(msgPasskeyExists, err)
	case errors.Is(err, authn.ErrPasskeyLimit):
		return errBadRequest(msgPasskeyLimit, err)
	case errors.Is(err, authn.ErrNotFound):
		return errNotFound(err)
	}
	return err
}
