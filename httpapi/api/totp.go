package api

import (
	"errors"
	"net/http"

	"strongbox/authn"
	"strongbox/authn/validation"
)

// Messages of the TOTP routes (strongbox's own: PocketBase has no TOTP).
const (
	msgTOTPOff        = "The collection is not configured to allow TOTP authentication."
	msgTOTPInvalid    = "Invalid TOTP code."
	msgTOTPTooMany    = "Too many attempts, please try again later."
	msgTOTPEnabled    = "TOTP is already enabled for this account."
	msgTOTPNotEnabled = "TOTP is not enabled for this account."
	msgTOTPNoSetup    = "There is no TOTP setup to confirm."
)

// maxTOTPCodeBytes is the longest code the TOTP routes take: a recovery
// code with spaces around it fits, and so does what the OTP route takes.
const maxTOTPCodeBytes = maxOTPCodeBytes

var totpOff = closedWhen{func(c *authn.Collection) bool { return !c.TOTP.Enabled }, http.StatusForbidden, msgTOTPOff}

// totpError is the answer to a refusal of the TOTP store methods.
func totpError(err error) error {
	if tm, ok := errors.AsType[*authn.TooManyError](err); ok {
		e := throttled(newError(http.StatusTooManyRequests, msgTOTPTooMany, nil), "totp")
		e.RetryAfter = tm.RetryAfter
		return e
	}
	switch {
	case errors.Is(err, authn.ErrTOTPOff):
		return errForbidden(msgTOTPOff)
	case errors.Is(err, authn.ErrTOTPInvalid):
		return errBadRequest(msgTOTPInvalid, err)
	case errors.Is(err, authn.ErrTOTPEnabled):
		return errBadRequest(msgTOTPEnabled, err)
	case errors.Is(err, authn.ErrTOTPNotEnabled):
		return errBadRequest(msgTOTPNotEnabled, err)
	case errors.Is(err, authn.ErrTOTPNoSetup):
		return errBadRequest(msgTOTPNoSetup, err)
	case errors.Is(err, authn.ErrNotFound):
		return errNotFound(err)
	}
	return signInError(err)
}

// totpCode reads the body's code: required unless optional, at most
// maxTOTPCodeBytes.
func totpCode(b *body, optional bool) (string, error) {
	code, err := b.str("code")
	if err != nil {
		return "", err
	}
	switch {
	case code == "" && !optional:
		return "", errValidation(msgValidationFailed, validation.Errors{"code": validation.Required()})
	case len(code) > maxTOTPCodeBytes:
		return "", errValidation(msgValidationFailed, validation.Errors{"code": validation.LengthOutOfRange(1, maxTOTPCodeBytes)})
	}
	return code, nil
}

// handleTOTPStatus handles GET /api/collections/{collection}/totp: the
// signed-in record's own TOTP state, {"enabled", "pending",
// "recoveryCodes"} (unused ones, counted).
func (s *Server) handleTOTPStatus(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, s.auth.TOTPStatus(c, st.rec))
}

// handleTOTPSetup handles POST /api/collections/{collection}/totp/setup:
// a new secret for the signed-in record, pending until confirmed, as
// {"secret": BASE32, "uri": "otpauth://totp/…"}; the issuer is the
// settings' meta.appName. This is the only answer that holds the secret.
func (s *Server) handleTOTPSetup(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	if !c.TOTP.Enabled {
		return errForbidden(msgTOTPOff)
	}
	secret, uri, err := s.auth.SetupTOTP(c, st.rec, s.settings.Get().Meta.AppName)
	if err != nil {
		return totpError(err)
	}
	return writeJSON(w, r, http.StatusOK, struct {
		Secret string `json:"secret"`
		URI    string `json:"uri"`
	}{secret, uri})
}

// handleTOTPConfirm handles POST /api/collections/{collection}/totp/confirm
// {"code"}: the pending TOTP of the signed-in record is confirmed by a
// current code, and the answer {"recoveryCodes": […]} is the one time the
// recovery codes are shown.
func (s *Server) handleTOTPConfirm(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownAuthCollection(r)
	if err != nil {
		return err
	}
	if !c.TOTP.Enabled {
		return errForbidden(msgTOTPOff)
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	code, err := totpCode(b, false)
	if err != nil {
		return err
	}
	codes, err := s.auth.ConfirmTOTP(c, st.rec, code)
	if err != nil {
		return s.totpRefused(r, c, st.rec, err)
	}
	s.log.Info("totp enabled", "collection", c.Name, "record", st.rec.ID)
	return writeJSON(w, r, http.StatusOK, struct {
		RecoveryCodes []string `json:"recoveryCodes"`
	}{codes})
}

// handleTOTPDisable handles POST /api/collections/{collection}/totp/disable
// {"code"} or, by a superuser, {"recordId"}: the signed-in record's TOTP
// is deleted given a current code or a recovery code (none for one still
// pending); a superuser deletes that of record recordId of the
// collection without a code (with one, if the record is the superuser's
// own). 204.
func (s *Server) handleTOTPDisable(w http.ResponseWriter, r *http.Request) error {
	c, st, err := s.ownOrManagedCollection(r)
	if err != nil {
		return err
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	recordID, err := b.str("recordId")
	if err != nil {
		return err
	}
	rec, force := st.rec, false
	if recordID != "" && (st.col.ID != c.ID || recordID != st.rec.ID) {
		if !st.isSuperuser() {
			return errForbidden(msgSuperusersOnly)
		}
		var ok bool
		if rec, ok = s.auth.Record(c, recordID); !ok {
			return errNotFound(nil)
		}
		force = true
	} else if st.col.ID != c.ID {
		return errForbidden("The request requires auth record from " + st.col.Name + " collection.")
	}
	code, err := totpCode(b, force || !s.auth.TOTPStatus(c, rec).Enabled)
	if err != nil {
		return err
	}
	if err := s.auth.DisableTOTP(c, rec, code, force); err != nil {
		return s.totpRefused(r, c, rec, err)
	}
	if force {
		s.log.Info("totp disabled by a superuser", auditAttrs(r, "collection", c.Name, "record", rec.ID)...)
	} else {
		s.log.Info("totp disabled", "collection", c.Name, "record", rec.ID)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ownOrManagedCollection is ownAuthCollection for a route a superuser may
// also call on another collection's record: the path's auth collection
// (404), a record signed in (401); the collection of the token is the
// handler's to check.
func (s *Server) ownOrManagedCollection(r *http.Request) (*authn.Collection, *state, error) {
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
	return c, st, nil
}

// handleAuthWithTOTP handles POST /api/collections/{collection}/auth-with-totp
// {"code"} with the mfaId of a first factor (query or body): the second
// factor of an MFA sign-in, by a current code of the session's record or
// one of its recovery codes; the §2.6 result, or the MFA refusals.
func (s *Server) handleAuthWithTOTP(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, totpOff)
	if err != nil {
		return err
	}
	code, err := b.str("code")
	if err != nil {
		return err
	}
	mfaID, err := mfaIDOf(r, b)
	if err != nil {
		return err
	}
	data := validation.Errors{}
	switch {
	case mfaID == "":
		data["mfaId"] = validation.Required()
	case len(mfaID) > 255:
		data["mfaId"] = validation.LengthOutOfRange(1, 255)
	}
	switch {
	case code == "":
		data["code"] = validation.Required()
	case len(code) > maxTOTPCodeBytes:
		data["code"] = validation.LengthOutOfRange(1, maxTOTPCodeBytes)
	}
	if len(data) > 0 {
		return errValidation(msgValidationFailed, data)
	}
	rec, recovery, err := s.auth.AuthWithTOTP(c, mfaID, code)
	if err != nil {
		if errors.Is(err, authn.ErrTOTPInvalid) || errors.Is(err, authn.ErrTOTPTooMany) {
			if owner, err2 := s.auth.MFARecord(c, mfaID); err2 == nil {
				return s.totpRefused(r, c, owner, err)
			}
		}
		return totpError(err)
	}
	if recovery {
		s.log.Warn("totp recovery code used", "collection", c.Name, "record", rec.ID,
			"left", s.auth.TOTPStatus(c, rec).RecoveryCodes)
	}
	return s.signIn(w, r, c, rec, b.vals, authn.MethodTOTP, mfaID, nil)
}

// totpRefused renders a refused TOTP code of rec, logging the refusals
// that the record's cap of wrong codes ends.
func (s *Server) totpRefused(r *http.Request, c *authn.Collection, rec *authn.Record, err error) error {
	if errors.Is(err, authn.ErrTOTPTooMany) {
		s.log.Warn("totp: too many wrong codes", "collection", c.Name, "record", rec.ID, "ip", stateOf(r).ip)
	}
	return totpError(err)
}
