package authn

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// enableOTP turns OTP (and, with mfa, MFA) on for users and returns it.
func enableOTP(t *testing.T, s *Store, mfa bool) *Collection {
	t.Helper()
	users, _ := s.Collection(UsersName)
	body := `{"otp":{"enabled":true}}`
	if mfa {
		body = `{"otp":{"enabled":true},"mfa":{"enabled":true}}`
	}
	c, err := s.UpdateCollection(users, input(t, body))
	if err != nil {
		t.Fatalf("enable OTP: %v", err)
	}
	return c
}

type delivered struct{ id, code string }

// requestOTP asks for an OTP for r and waits (at most 10 s) until it is
// saved and handed to deliver.
func requestOTP(t *testing.T, s *Store, c *Collection, r *Record) delivered {
	t.Helper()
	ch := make(chan delivered, 1)
	id, reused, err := s.RequestOTP(c, r, func(id, code string) error {
		ch <- delivered{id, code}
		return nil
	})
	if err != nil || reused {
		t.Fatalf("RequestOTP = %q, %v, %v", id, reused, err)
	}
	select {
	case d := <-ch:
		if d.id != id {
			t.Fatalf("delivered %s, answered %s", d.id, id)
		}
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("OTP not delivered within 10 s")
	}
	return delivered{}
}

// TestOTPDurableAndHashed: an OTP survives a reopen, and the journal
// holds its hash, never its code.
func TestOTPDurableAndHashed(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableOTP(t, s, false)
	r := signUp(t, s, "ann@example.com", "password1")
	d := requestOTP(t, s, c, r)
	if len(d.code) != 8 || strings.Trim(d.code, otpAlphabet) != "" {
		t.Errorf("code %q: want 8 digits", d.code)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(d.code)) {
		t.Errorf("the journal holds the code %s", d.code)
	}
	if !bytes.Contains(b, []byte(d.id)) {
		t.Errorf("the journal does not hold the OTP %s", d.id)
	}
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	if got, err := s.OTPRecord(c, d.id); err != nil || got != r.ID {
		t.Fatalf("after reopen OTPRecord = %q, %v, want %s", got, err, r.ID)
	}
	rec, err := s.AuthWithOTP(c, d.id, d.code)
	if err != nil || rec.ID != r.ID || !rec.Verified {
		t.Fatalf("AuthWithOTP after reopen = %v, %v: want ann, verified", rec, err)
	}
	if _, err := s.AuthWithOTP(c, d.id, d.code); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("second use: %v, want ErrOTPInvalid", err)
	}
	// Consumed durably too.
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	if _, err := s.OTPRecord(c, d.id); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("consumed OTP after reopen: %v, want ErrOTPInvalid", err)
	}
}

// TestOTPDiesAfterWrongCodes: MaxOTPAttempts wrong codes kill an OTP (the
// right code is then ErrOTPTooMany), fewer do not, and the record's other
// OTPs keep their own count.
func TestOTPDiesAfterWrongCodes(t *testing.T) {
	tests := []struct {
		wrong int
		want  error
	}{
		{0, nil},
		{MaxOTPAttempts - 1, nil},
		{MaxOTPAttempts, ErrOTPTooMany},
		{MaxOTPAttempts + 3, ErrOTPTooMany},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d wrong", tt.wrong), func(t *testing.T) {
			s, _, _ := newTestStore(t)
			c := enableOTP(t, s, false)
			r := signUp(t, s, "ann@example.com", "password1")
			d := requestOTP(t, s, c, r)
			other := requestOTP(t, s, c, r)
			for i := range tt.wrong {
				want := ErrOTPInvalid
				if i >= MaxOTPAttempts {
					want = ErrOTPTooMany
				}
				if _, err := s.AuthWithOTP(c, d.id, "x"); !errors.Is(err, want) {
					t.Fatalf("wrong code %d = %v, want %v", i+1, err, want)
				}
			}
			if _, err := s.AuthWithOTP(c, d.id, d.code); !errors.Is(err, tt.want) {
				t.Errorf("right code = %v, want %v", err, tt.want)
			}
			if _, err := s.AuthWithOTP(c, other.id, other.code); err != nil {
				t.Errorf("the record's other OTP = %v, want a sign-in", err)
			}
		})
	}
}

func TestOTPChecks(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableOTP(t, s, false)
	r := signUp(t, s, "ann@example.com", "password1")
	d := requestOTP(t, s, c, r)
	su := s.Superusers()
	tests := []struct {
		name     string
		col      *Collection
		id, code string
		want     error
	}{
		{"wrong code", c, d.id, "00000000x", ErrOTPInvalid},
		{"empty code", c, d.id, "", ErrOTPInvalid},
		{"unknown id", c, "aaaaaaaaaaaaaaa", d.code, ErrOTPInvalid},
		{"other collection", su, d.id, d.code, ErrOTPOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := s.AuthWithOTP(tt.col, tt.id, tt.code); !errors.Is(err, tt.want) {
				t.Errorf("AuthWithOTP = %v, want %v", err, tt.want)
			}
		})
	}
	clk.t = clk.t.Add(179 * time.Second)
	if _, err := s.OTPRecord(c, d.id); err != nil {
		t.Errorf("at 179 s: %v, want usable", err)
	}
	clk.t = clk.t.Add(time.Second)
	if _, err := s.AuthWithOTP(c, d.id, d.code); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("at 180 s: %v, want ErrOTPInvalid", err)
	}
	if n, err := s.Sweep(); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v, want 1", n, err)
	}
	if len(s.otps) != 0 {
		t.Errorf("%d OTPs left after the sweep", len(s.otps))
	}
}

// TestOTPVerifiesOnlyCurrentEmail: a code sent to an address the record
// no longer has signs in but does not verify.
func TestOTPVerifiesOnlyCurrentEmail(t *testing.T) {
	s, _, _ := newTestStore(t)
	c := enableOTP(t, s, false)
	r := signUp(t, s, "ann@example.com", "password1")
	d := requestOTP(t, s, c, r)
	if _, err := s.UpdateRecord(t.Context(), c, r.ID, RecordInput{Manager: true, Values: map[string]any{"email": "ann2@example.com"}}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.AuthWithOTP(c, d.id, d.code)
	if err != nil || rec.Verified {
		t.Errorf("AuthWithOTP = %v, %v: want signed in, not verified", rec, err)
	}
}

func TestOTPLiveCap(t *testing.T) {
	s, clk, _ := newTestStore(t)
	c := enableOTP(t, s, false)
	r := signUp(t, s, "ann@example.com", "password1")
	var last string
	for range MaxLiveOTPs {
		last = requestOTP(t, s, c, r).id
		clk.t = clk.t.Add(time.Second)
	}
	id, reused, err := s.RequestOTP(c, r, func(string, string) error {
		t.Error("delivered past the cap")
		return nil
	})
	if err != nil || !reused || id != last {
		t.Errorf("11th RequestOTP = %q, %v, %v, want %q reused", id, reused, err, last)
	}
	if n := len(s.recOTPs[r.ID]); n != MaxLiveOTPs {
		t.Errorf("%d OTPs stored, want %d", n, MaxLiveOTPs)
	}
}

// TestOTPGoesWithRecord: deleting a record deletes its OTPs and MFA
// sessions, in memory and after a reopen.
func TestOTPGoesWithRecord(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableOTP(t, s, true)
	r := signUp(t, s, "ann@example.com", "password1")
	d := requestOTP(t, s, c, r)
	mfa, err := s.beginMFA(c, r, MethodPassword)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(c, r.ID); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		if _, err := s.OTPRecord(c, d.id); !errors.Is(err, ErrOTPInvalid) {
			t.Errorf("OTP of a deleted record: %v", err)
		}
		if len(s.otps) != 0 || len(s.mfas) != 0 {
			t.Errorf("%d OTPs, %d MFA sessions left", len(s.otps), len(s.mfas))
		}
		if err := s.finishMFA(c, r, mfa, MethodOTP, nil); !errors.Is(err, ErrMFAInvalid) {
			t.Errorf("MFA session of a deleted record: %v", err)
		}
	}
	check(s)
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	check(s)
}

// TestMFASessions: durable, single use, checked in PocketBase's order,
// expired after mfa.duration, ended by a new password.
func TestMFASessions(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableOTP(t, s, true)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	id, err := s.beginMFA(c, ann, MethodPassword)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	c, _ = s.Collection(UsersName)
	tests := []struct {
		name   string
		rec    *Record
		id     string
		method string
		want   error
	}{
		{"unknown", ann, "aaaaaaaaaaaaaaa", MethodOTP, ErrMFAInvalid},
		{"other record", bob, id, MethodOTP, ErrMFAOtherRecord},
		{"same method", ann, id, MethodPassword, ErrMFASameMethod},
		{"second factor", ann, id, MethodOTP, nil},
		{"used", ann, id, MethodOTP, ErrMFAInvalid},
	}
	for _, tt := range tests {
		if err := s.finishMFA(c, tt.rec, tt.id, tt.method, nil); !errors.Is(err, tt.want) && err != tt.want {
			t.Errorf("%s: finishMFA = %v, want %v", tt.name, err, tt.want)
		}
	}
	id, _ = s.beginMFA(c, ann, MethodOTP)
	clk.t = clk.t.Add(1800 * time.Second)
	if err := s.finishMFA(c, ann, id, MethodPassword, nil); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("expired: %v, want ErrMFAInvalid", err)
	}
	id, _ = s.beginMFA(c, ann, MethodOTP)
	if _, err := s.SetPassword(t.Context(), c, ann.ID, "password2"); err != nil {
		t.Fatal(err)
	}
	if err := s.finishMFA(c, ann, id, MethodPassword, nil); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("after a password change: %v, want ErrMFAInvalid", err)
	}
}

// TestOTPCompaction: compaction keeps live OTPs and MFA sessions and
// drops expired ones.
func TestOTPCompaction(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableOTP(t, s, true)
	r := signUp(t, s, "ann@example.com", "password1")
	old := requestOTP(t, s, c, r)
	clk.t = clk.t.Add(200 * time.Second)
	live := requestOTP(t, s, c, r)
	mfa, _ := s.beginMFA(c, r, MethodPassword)
	s.mu.Lock()
	err := s.compact()
	s.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTestStore(t, path, clk)
	defer s.Close()
	if _, ok := s.otps[old.id]; ok {
		t.Errorf("expired OTP survived compaction")
	}
	if _, err := s.AuthWithOTP(c, live.id, live.code); err != nil {
		t.Errorf("live OTP after compaction: %v", err)
	}
	if err := s.finishMFA(c, r, mfa, MethodOTP, nil); err != nil {
		t.Errorf("MFA session after compaction: %v", err)
	}
}

// TestCreateOTP is the CLI's path: durable at once, no mail, never
// verifies.
func TestCreateOTP(t *testing.T) {
	s, _, _ := newTestStore(t)
	users, _ := s.Collection(UsersName)
	r := signUp(t, s, "ann@example.com", "password1")
	if _, _, err := s.CreateOTP(users, r); !errors.Is(err, ErrOTPOff) {
		t.Errorf("CreateOTP with OTP off: %v, want ErrOTPOff", err)
	}
	c := enableOTP(t, s, false)
	id, code, err := s.CreateOTP(c, r)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := s.AuthWithOTP(c, id, code)
	if err != nil || rec.Verified {
		t.Errorf("AuthWithOTP = %v, %v: want signed in, not verified", rec, err)
	}
}

// TestOTPNotSavedNotSent: when the disk refuses the OTP, its code is never
// handed over to be mailed and the id answered is not usable; a failed
// delivery deletes the OTP.
func TestOTPNotSavedNotSent(t *testing.T) {
	s, fsys, _, _ := newFaultyStore(t)
	c := enableOTP(t, s, false)
	r := signUp(t, s, "ann@example.com", "password1")
	fsys.SetFree(0)
	id, _, err := s.RequestOTP(c, r, func(string, string) error {
		t.Error("delivered an OTP the disk refused")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.pending.Wait()
	if _, err := s.OTPRecord(c, id); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("unsaved OTP: %v, want ErrOTPInvalid", err)
	}
	fsys.SetFree(-1)
	id, _, err = s.RequestOTP(c, r, func(string, string) error { return errors.New("smtp down") })
	if err != nil {
		t.Fatal(err)
	}
	s.pending.Wait()
	if _, err := s.OTPRecord(c, id); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("undelivered OTP: %v, want ErrOTPInvalid", err)
	}
}
