package authn

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"strongbox/authn/totp"
)

// enableTOTP turns the totp option on for users (with extra, more options
// of the same change) and returns the collection.
func enableTOTP(t *testing.T, s *Store, extra string) *Collection {
	t.Helper()
	users, _ := s.Collection(UsersName)
	c, err := s.UpdateCollection(users, input(t, `{"totp":{"enabled":true}`+extra+`}`))
	if err != nil {
		t.Fatalf("enable TOTP: %v", err)
	}
	return c
}

// enrol sets up and confirms a TOTP for r and returns its key and
// recovery codes; the clock then moves one step on, so that the next code
// is a fresh one.
func enrol(t *testing.T, s *Store, clk *testClock, c *Collection, r *Record) ([]byte, []string) {
	t.Helper()
	secret, uri, err := s.SetupTOTP(c, r, "Acme")
	if err != nil {
		t.Fatalf("SetupTOTP: %v", err)
	}
	key, err := totp.DecodeSecret(secret)
	if err != nil {
		t.Fatalf("secret %q: %v", secret, err)
	}
	if want := totp.URI("Acme", r.Email, key); uri != want {
		t.Errorf("uri = %s, want %s", uri, want)
	}
	codes, err := s.ConfirmTOTP(c, r, totp.Code(key, clk.t))
	if err != nil {
		t.Fatalf("ConfirmTOTP: %v", err)
	}
	clk.t = clk.t.Add(totp.Period)
	return key, codes
}

// firstFactor signs r in by password and returns the MFA session it opens.
func firstFactor(t *testing.T, s *Store, c *Collection, r *Record) string {
	t.Helper()
	out, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: r, Method: MethodPassword})
	if err != nil || out.MFAID == "" {
		t.Fatalf("first factor = %+v, %v, want an MFA session", out, err)
	}
	return out.MFAID
}

// TestTOTPSignIn: a confirmed TOTP asks for a second factor after a
// password even with mfa off, auth-with-totp completes it, and a code is
// accepted once, through a reopen of the store too.
func TestTOTPSignIn(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	if out, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: ann, Method: MethodPassword}); err != nil || out.Token == "" {
		t.Fatalf("before enrolment: %+v, %v, want a token", out, err)
	}
	if _, err := s.ConfirmTOTP(c, ann, "123456"); !errors.Is(err, ErrTOTPNoSetup) {
		t.Errorf("confirm without setup: %v, want ErrTOTPNoSetup", err)
	}
	secret, _, err := s.SetupTOTP(c, ann, "Acme")
	if err != nil {
		t.Fatal(err)
	}
	key, _ := totp.DecodeSecret(secret)
	if st := s.TOTPStatus(c, ann); st != (TOTPStatus{Pending: true}) {
		t.Errorf("pending status = %+v", st)
	}
	if out, _ := s.SignIn(t.Context(), SignIn{Collection: c, Record: ann, Method: MethodPassword}); out.Token == "" {
		t.Error("a pending TOTP asked for a second factor")
	}
	if _, err := s.ConfirmTOTP(c, ann, totp.Code(key, clk.t.Add(-2*totp.Period))); !errors.Is(err, ErrTOTPInvalid) {
		t.Errorf("confirm with an old code: %v, want ErrTOTPInvalid", err)
	}
	codes, err := s.ConfirmTOTP(c, ann, totp.Code(key, clk.t))
	if err != nil || len(codes) != RecoveryCodes {
		t.Fatalf("ConfirmTOTP = %d codes, %v", len(codes), err)
	}
	if _, _, err := s.SetupTOTP(c, ann, "Acme"); !errors.Is(err, ErrTOTPEnabled) {
		t.Errorf("setup over a confirmed TOTP: %v, want ErrTOTPEnabled", err)
	}
	mfa := firstFactor(t, s, c, ann)
	// The confirming code's step is used.
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t)); !errors.Is(err, ErrTOTPInvalid) {
		t.Errorf("the confirming code again: %v, want ErrTOTPInvalid", err)
	}
	clk.t = clk.t.Add(totp.Period)
	code := totp.Code(key, clk.t)
	rec, recovery, err := s.AuthWithTOTP(c, mfa, code)
	if err != nil || rec.ID != ann.ID || recovery {
		t.Fatalf("AuthWithTOTP = %v, %v, %v", rec, recovery, err)
	}
	out, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: ann, Method: MethodTOTP, MFAID: mfa})
	if err != nil || out.Token == "" {
		t.Fatalf("second factor = %+v, %v", out, err)
	}
	if _, err := s.MFARecord(c, mfa); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("the session after use: %v, want ErrMFAInvalid", err)
	}
	// Replay, in a new session, after a restart.
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	mfa = firstFactor(t, s, c, ann)
	if _, _, err := s.AuthWithTOTP(c, mfa, code); !errors.Is(err, ErrTOTPInvalid) {
		t.Errorf("replayed code after reopen: %v, want ErrTOTPInvalid", err)
	}
	clk.t = clk.t.Add(totp.Period)
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t)); err != nil {
		t.Errorf("the next step's code: %v", err)
	}
}

// TestTOTPRecoveryCodes: each recovery code works once, typed in any
// case, with or without its dashes.
func TestTOTPRecoveryCodes(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	_, codes := enrol(t, s, clk, c, ann)
	seen := map[string]bool{}
	for _, rc := range codes {
		if len(rc) != 14 || rc[4] != '-' || rc[9] != '-' || normalizeRecovery(rc) == "" || seen[rc] {
			t.Errorf("recovery code %q: want xxxx-xxxx-xxxx, unique", rc)
		}
		seen[rc] = true
	}
	for i, typed := range []string{codes[0], strings.ToUpper(strings.ReplaceAll(codes[1], "-", "")), " " + codes[2] + " "} {
		mfa := firstFactor(t, s, c, ann)
		if _, used, err := s.AuthWithTOTP(c, mfa, typed); err != nil || !used {
			t.Fatalf("recovery code %d (%q): used %v, %v", i, typed, used, err)
		}
		if _, _, err := s.AuthWithTOTP(c, mfa, typed); !errors.Is(err, ErrTOTPInvalid) {
			t.Errorf("recovery code %d again: %v, want ErrTOTPInvalid", i, err)
		}
	}
	if st := s.TOTPStatus(c, ann); st.RecoveryCodes != RecoveryCodes-3 || !st.Enabled {
		t.Errorf("status = %+v, want %d codes left", st, RecoveryCodes-3)
	}
}

// TestTOTPAttemptCaps: an MFA session dies after its 5th wrong code,
// and a record takes 10 wrong codes an hour from all sessions; the right
// code is refused past either, before it is compared.
func TestTOTPAttemptCaps(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	key, _ := enrol(t, s, clk, c, ann)
	wrong := "000000"
	if totp.Code(key, clk.t) == wrong {
		wrong = "000001"
	}
	mfa := firstFactor(t, s, c, ann)
	for i := range MaxTOTPSessionFailures {
		if _, _, err := s.AuthWithTOTP(c, mfa, wrong); !errors.Is(err, ErrTOTPInvalid) {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	_, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t))
	if tm, ok := errors.AsType[*TooManyError](err); !ok || tm.RetryAfter != 0 {
		t.Fatalf("the right code in a dead session: %v, want TooManyError{0}", err)
	}
	mfa = firstFactor(t, s, c, ann)
	for i := MaxTOTPSessionFailures; i < MaxTOTPRecordFailures; i++ {
		if _, _, err := s.AuthWithTOTP(c, mfa, wrong); !errors.Is(err, ErrTOTPInvalid) {
			t.Fatalf("wrong code %d: %v", i+1, err)
		}
	}
	clk.t = clk.t.Add(10 * time.Minute)
	mfa = firstFactor(t, s, c, ann)
	_, _, err = s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t))
	if tm, ok := errors.AsType[*TooManyError](err); !ok || tm.RetryAfter != 50*time.Minute {
		t.Fatalf("the right code past the record's cap: %v, want TooManyError{%v}", err, 50*time.Minute)
	}
	if err := s.DisableTOTP(c, ann, totp.Code(key, clk.t), false); !errors.Is(err, ErrTOTPTooMany) {
		t.Errorf("disable past the cap: %v, want ErrTOTPTooMany", err)
	}
	clk.t = clk.t.Add(time.Hour)
	mfa = firstFactor(t, s, c, ann)
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t)); err != nil {
		t.Errorf("after the window: %v", err)
	}
}

// TestTOTPSecretSealed: the journal holds neither the secret nor its
// base32, and a sealed secret opens only for its own record and under its
// collection's current key; a new authToken secret (set, or drawn for a
// changed authRule) seals every secret again, and the authenticator keeps
// working while the tokens end.
func TestTOTPSecretSealed(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	key, _ := enrol(t, s, clk, c, ann)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{string(key), totp.EncodeSecret(key), base64.RawStdEncoding.EncodeToString(key), base64.StdEncoding.EncodeToString(key)} {
		if bytes.Contains(b, []byte(form)) {
			t.Errorf("the journal holds the secret as %q", form)
		}
	}
	s.mu.RLock()
	sealed := s.totps[ann.ID].Secret
	s.mu.RUnlock()
	c, _ = s.Collection(UsersName)
	if got, err := openTOTP(c, ann.ID, sealed); err != nil || !bytes.Equal(got, key) {
		t.Fatalf("openTOTP = %x, %v", got, err)
	}
	if _, err := openTOTP(c, "otherrecord0000", sealed); err == nil {
		t.Error("the secret opened for another record")
	}
	token, _ := s.NewAuthToken(c, ann, true, 0)
	for i, change := range []string{`{"authToken":{"secret":"` + strings.Repeat("n", 50) + `"}}`, `{"authRule":"verified = false"}`} {
		old := c
		if c, err = s.UpdateCollection(c, input(t, change)); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		if _, err := openTOTP(c, ann.ID, sealed); err == nil {
			t.Errorf("change %d: the old sealed secret opens under the new key", i)
		}
		mfa := firstFactor(t, s, c, ann)
		clk.t = clk.t.Add(totp.Period)
		if _, _, err := s.AuthWithTOTP(old, mfa, totp.Code(key, clk.t)); err != nil {
			t.Errorf("change %d: the authenticator after a new authToken secret: %v", i, err)
		}
		s.mu.RLock()
		sealed = s.totps[ann.ID].Secret
		s.mu.RUnlock()
	}
	if _, _, _, err := s.VerifyToken(token, TokenAuth); err == nil {
		t.Error("a token from before the new secret still verifies")
	}
}

// TestTOTPKeptAndCleared: a password change keeps TOTP, turning the
// collection's totp off suspends it, a superuser's DisableTOTP clears it
// without a code, and deleting the record deletes it.
func TestTOTPKeptAndCleared(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	key, codes := enrol(t, s, clk, c, ann)
	ann, err := s.SetPassword(context.Background(), c, ann.ID, "password2")
	if err != nil {
		t.Fatal(err)
	}
	firstFactor(t, s, c, ann) // still asked for
	off, err := s.UpdateCollection(c, input(t, `{"totp":{"enabled":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.SignIn(t.Context(), SignIn{Collection: off, Record: ann, Method: MethodPassword}); err != nil || out.Token == "" {
		t.Errorf("totp off: %+v, %v, want a token", out, err)
	}
	c = enableTOTP(t, s, "")
	mfa := firstFactor(t, s, c, ann)
	if err := s.DisableTOTP(c, ann, "000000", false); !errors.Is(err, ErrTOTPInvalid) && totp.Code(key, clk.t) != "000000" {
		t.Errorf("disable with a wrong code: %v, want ErrTOTPInvalid", err)
	}
	if err := s.DisableTOTP(c, ann, codes[0], false); err != nil {
		t.Fatalf("disable with a recovery code: %v", err)
	}
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t)); !errors.Is(err, ErrTOTPNotEnabled) {
		t.Errorf("auth after disable: %v, want ErrTOTPNotEnabled", err)
	}
	if err := s.DisableTOTP(c, ann, "", true); !errors.Is(err, ErrTOTPNotEnabled) {
		t.Errorf("disable twice: %v, want ErrTOTPNotEnabled", err)
	}
	enrol(t, s, clk, c, ann)
	if err := s.DisableTOTP(c, ann, "", true); err != nil {
		t.Errorf("a superuser's disable: %v", err)
	}
	enrol(t, s, clk, c, ann)
	if err := s.DeleteRecord(c, ann.ID); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.totps) != 0 {
		t.Errorf("%d TOTPs left after the record's deletion", len(s.totps))
	}
}

// TestTOTPNeedsOwnFactor: with the collection's MFA on (password and
// OTP), a record that enrolled TOTP cannot complete with the OTP: one of
// the two factors must be its own authenticator.
func TestTOTPNeedsOwnFactor(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableTOTP(t, s, `,"otp":{"enabled":true},"mfa":{"enabled":true}`)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	key, _ := enrol(t, s, clk, c, ann)
	mfa := firstFactor(t, s, c, ann)
	if _, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: ann, Method: MethodOTP, MFAID: mfa}); !errors.Is(err, ErrMFAFactor) {
		t.Fatalf("OTP as the second factor of a TOTP record: %v, want ErrMFAFactor", err)
	}
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t)); err != nil {
		t.Fatal(err)
	}
	if out, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: ann, Method: MethodTOTP, MFAID: mfa}); err != nil || out.Token == "" {
		t.Errorf("TOTP after the refused OTP: %+v, %v", out, err)
	}
	// A record without TOTP completes with the OTP as before.
	mfa = firstFactor(t, s, c, bob)
	if out, err := s.SignIn(t.Context(), SignIn{Collection: c, Record: bob, Method: MethodOTP, MFAID: mfa}); err != nil || out.Token == "" {
		t.Errorf("OTP second factor without TOTP: %+v, %v", out, err)
	}
	// bob's session cannot carry ann's TOTP, nor a session of another collection.
	mfa = firstFactor(t, s, c, bob)
	if _, _, err := s.AuthWithTOTP(c, mfa, totp.Code(key, clk.t.Add(totp.Period))); !errors.Is(err, ErrTOTPNotEnabled) {
		t.Errorf("bob's session: %v, want ErrTOTPNotEnabled", err)
	}
	su := s.Superusers()
	if _, _, err := s.AuthWithTOTP(su, mfa, "123456"); !errors.Is(err, ErrTOTPOff) {
		t.Errorf("_superusers with totp off: %v, want ErrTOTPOff", err)
	}
	su, err := s.UpdateCollection(su, input(t, `{"totp":{"enabled":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.AuthWithTOTP(su, mfa, "123456"); !errors.Is(err, ErrMFAOtherRecord) {
		t.Errorf("a users session in _superusers: %v, want ErrMFAOtherRecord", err)
	}
	if _, _, err := s.AuthWithTOTP(c, "nosuchsession00", "123456"); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("unknown session: %v, want ErrMFAInvalid", err)
	}
	clk.t = clk.t.Add(31 * time.Minute)
	if _, _, err := s.AuthWithTOTP(c, mfa, "123456"); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("expired session: %v, want ErrMFAInvalid", err)
	}
}

// TestTOTPCompaction: a compaction keeps the authenticators and their
// last steps.
func TestTOTPCompaction(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableTOTP(t, s, "")
	ann := signUp(t, s, "ann@example.com", "password1")
	key, _ := enrol(t, s, clk, c, ann)
	mfa := firstFactor(t, s, c, ann)
	code := totp.Code(key, clk.t)
	if _, _, err := s.AuthWithTOTP(c, mfa, code); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	err := s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	if st := s.TOTPStatus(c, ann); !st.Enabled || st.RecoveryCodes != RecoveryCodes {
		t.Fatalf("after compaction: %+v", st)
	}
	mfa = firstFactor(t, s, c, ann)
	if _, _, err := s.AuthWithTOTP(c, mfa, code); !errors.Is(err, ErrTOTPInvalid) {
		t.Errorf("replay after compaction: %v, want ErrTOTPInvalid", err)
	}
}

func FuzzNormalizeRecovery(f *testing.F) {
	for _, s := range []string{"abcd-efgh-jkmn", "ABCD EFGH JKMN", "abcdefghjkmn", "", "0000-0000-0000", strings.Repeat("a", 65)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := normalizeRecovery(s)
		if n == "" {
			return
		}
		if len(n) != recoveryLength || strings.Trim(n, recoveryAlphabet) != "" || normalizeRecovery(n) != n {
			t.Fatalf("normalizeRecovery(%q) = %q", s, n)
		}
	})
}

// FuzzOpenTOTP: no sealed value, however damaged, panics when opened, and
// only the one sealed opens.
func FuzzOpenTOTP(f *testing.F) {
	c := &Collection{ID: UsersID, Type: TypeAuth, AuthOptions: &AuthOptions{AuthToken: TokenConfig{Secret: strings.Repeat("k", 50)}}}
	key := []byte("12345678901234567890")
	sealed, err := sealTOTP(c, "ann000000000000", key, make([]byte, 12))
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{sealed, "", "AAAA", sealed[:len(sealed)-2], "!!!!", strings.Repeat("A", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := openTOTP(c, "ann000000000000", s)
		if err == nil && (s != sealed || !bytes.Equal(got, key)) {
			t.Fatalf("openTOTP(%q) = %x, nil", s, got)
		}
	})
}

// BenchmarkTOTPCheck is the store's cost of checking one code, the
// secret's key derived and opened included, without the journal write
// that follows a match.
//
//	go test ./authn -run - -bench TOTPCheck
func BenchmarkTOTPCheck(b *testing.B) {
	clk := &testClock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	s := openTestStore(b, b.TempDir()+"/auth.journal", clk)
	defer s.Close()
	users, _ := s.Collection(UsersName)
	users, err := s.UpdateCollection(users, CollectionInput{Values: map[string]any{"totp": map[string]any{"enabled": true}}})
	if err != nil {
		b.Fatal(err)
	}
	p := "password1"
	ann, err := s.CreateRecord(b.Context(), users, RecordInput{Values: map[string]any{"email": "ann@example.com", "password": p, "passwordConfirm": p}})
	if err != nil {
		b.Fatal(err)
	}
	secret, _, err := s.SetupTOTP(users, ann, "bench")
	if err != nil {
		b.Fatal(err)
	}
	key, _ := totp.DecodeSecret(secret)
	if _, err := s.ConfirmTOTP(users, ann, totp.Code(key, clk.t)); err != nil {
		b.Fatal(err)
	}
	clk.t = clk.t.Add(totp.Period)
	code := totp.Code(key, clk.t)
	users, _ = s.Collection(UsersName)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.totps[ann.ID]
	for b.Loop() {
		if _, err := s.checkTOTP(users, e, code, true); err != nil {
			b.Fatal(err)
		}
	}
}
