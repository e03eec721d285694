package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"strongbox/authn"
	"strongbox/authn/mail"
	"strongbox/authn/validation"
	"strongbox/httpapi/ratelimit"
)

// Messages of OTP and MFA sign-in (the interface document §5), as
// PocketBase v0.31.0 words them.
const (
	msgOTPOff          = "The collection is not configured to allow OTP authentication."
	msgOTPInvalid      = "Invalid or expired OTP."
	msgOTPTooMany      = "Too many attempts, please try again later with a new OTP."
	msgMFAInvalid      = "Invalid or expired MFA session."
	msgMFAOtherRecord  = "Invalid MFA session."
	msgMFASameMethod   = "A different authentication method is required."
	msgMFACreateFailed = "Failed to create MFA record."
)

// otpAttemptRule is the OTP attempt limit of §5, PocketBase v0.31.0's:
// 5 codes per 180 s for one record from one client, checked before
// the code is compared (so the 6th is refused even when right), whatever
// the rateLimits settings say and whoever asks. It is keyed by the record,
// not the OTP, so that asking for new OTPs does not refill it. Beyond it,
// each OTP dies after authn.MaxOTPAttempts wrong codes from all clients
// together (AuthWithOTP), so that many addresses get no more guesses.
var otpAttemptRule = ratelimit.Rule{Label: "otp", MaxRequests: 5, Duration: 180 * time.Second}

// maxOTPCodeBytes is the longest code auth-with-otp takes, in bytes:
// PocketBase v0.31.0's form bound (1..71) of its password field.
const maxOTPCodeBytes = 71

// handleRequestOTP handles POST /api/collections/{collection}/request-otp:
// it answers 200 {"otpId"} whether or not a record has the email, and
// mails the code of a real OTP in the background once it is saved.
func (s *Server) handleRequestOTP(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, otpOff)
	if err != nil {
		return err
	}
	email, err := emailField(b, "email")
	if err != nil {
		return err
	}
	// Both limits count the request whether or not a record has the
	// email, so their 429 tells nothing about it.
	if err := s.allowMailClient(r); err != nil {
		return err
	}
	if !s.allowMailTarget(email) {
		return s.errMailTarget()
	}
	var id string
	if rec, ok := s.auth.FindByEmail(c, email); ok {
		id, _, err = s.auth.RequestOTP(c, rec, func(otpID, code string) error {
			return s.sendOTPMail(c, rec, otpID, code)
		})
	} else {
		id, err = s.auth.DecoyOTP(c, email)
	}
	if err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, struct {
		OTPID string `json:"otpId"`
	}{id})
}

// sendOTPMail renders the collection's OTP template for rec and hands it
// to the mail sender. It runs after the answer, once the OTP is saved.
func (s *Server) sendOTPMail(c *authn.Collection, rec *authn.Record, otpID, code string) error {
	if s.mail == nil {
		s.log.Warn("no mail sender: the OTP mail was dropped", "collection", c.Name, "record", rec.ID)
		return nil
	}
	m := s.renderMail(c, rec, c.OTP.EmailTemplate, rec.Email, map[string]string{mail.VarOTP: code, mail.VarOTPID: otpID})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return s.mail.Send(ctx, m)
}

// handleAuthWithOTP handles POST /api/collections/{collection}/auth-with-otp:
// the emailed code travels in password, as in PocketBase and its SDK.
func (s *Server) handleAuthWithOTP(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, otpOff)
	if err != nil {
		return err
	}
	vals, err := b.strs("otpId", "password")
	if err != nil {
		return err
	}
	otpID, code := vals[0], vals[1]
	mfaID, err := mfaIDOf(r, b)
	if err != nil {
		return err
	}
	data := validation.Errors{}
	switch {
	case otpID == "":
		data["otpId"] = validation.Required()
	case len(otpID) > 255:
		data["otpId"] = validation.LengthOutOfRange(1, 255)
	}
	switch {
	case code == "":
		data["password"] = validation.Required()
	case len(code) > maxOTPCodeBytes:
		data["password"] = validation.LengthOutOfRange(1, maxOTPCodeBytes)
	}
	if len(data) > 0 {
		return errValidation(msgValidationFailed, data)
	}
	recID, err := s.auth.OTPRecord(c, otpID)
	if err != nil {
		return otpError(err)
	}
	if ok, wait := s.otpAttempts.Take("otp "+c.ID+" "+recID, stateOf(r).client, otpAttemptRule); !ok {
		e := throttled(newError(http.StatusTooManyRequests, msgOTPTooMany, nil), "otp")
		e.RetryAfter = wait
		return e
	}
	rec, err := s.auth.AuthWithOTP(c, otpID, code)
	if err != nil {
		return otpError(err)
	}
	return s.signIn(w, r, c, rec, b.vals, authn.MethodOTP, mfaID, nil)
}

func otpError(err error) error {
	if errors.Is(err, authn.ErrOTPInvalid) {
		return errBadRequest(msgOTPInvalid, err)
	}
	if errors.Is(err, authn.ErrOTPOff) {
		return errForbidden(msgOTPOff)
	}
	if errors.Is(err, authn.ErrOTPTooMany) {
		return throttled(newError(http.StatusTooManyRequests, msgOTPTooMany, nil), "otp")
	}
	return err
}
