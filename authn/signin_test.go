package authn

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestSignIn: the authRule first, then MFA (challenge, then a second
// factor by another method), then a token that verifies for the record.
func TestSignIn(t *testing.T) {
	s, _, _ := newTestStore(t)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	open := mustCollection(t, s, UsersName)
	mfa := enableOTP(t, s, true)
	closed, err := s.UpdateCollection(mfa, input(t, `{"authRule":null}`))
	if err != nil {
		t.Fatal(err)
	}
	first := func(rec *Record) string {
		t.Helper()
		out, err := s.SignIn(t.Context(), SignIn{Collection: mfa, Record: rec, Method: MethodPassword})
		if err != nil || out.MFAID == "" || out.Token != "" {
			t.Fatalf("first factor = %+v, %v, want an MFA id", out, err)
		}
		return out.MFAID
	}
	tests := []struct {
		name  string
		in    SignIn
		want  error
		token bool // a token, else an MFA challenge
	}{
		{"no MFA", SignIn{Collection: open, Record: ann, Method: MethodPassword}, nil, true},
		{"authRule null", SignIn{Collection: closed, Record: ann, Method: MethodPassword}, ErrAuthRule, false},
		{"authRule null, wrong MFA id", SignIn{Collection: closed, Record: ann, Method: MethodOTP, MFAID: "aaaaaaaaaaaaaaa"}, ErrAuthRule, false},
		{"authRule null, superuser", SignIn{Collection: closed, Record: ann, Method: MethodPassword, Superuser: true}, nil, false},
		{"first factor", SignIn{Collection: mfa, Record: ann, Method: MethodOTP}, nil, false},
		{"unknown MFA id", SignIn{Collection: mfa, Record: ann, Method: MethodOTP, MFAID: "aaaaaaaaaaaaaaa"}, ErrMFAInvalid, false},
		{"other record", SignIn{Collection: mfa, Record: bob, Method: MethodOTP, MFAID: first(ann)}, ErrMFAOtherRecord, false},
		{"same method", SignIn{Collection: mfa, Record: ann, Method: MethodPassword, MFAID: first(ann)}, ErrMFASameMethod, false},
		{"second factor", SignIn{Collection: mfa, Record: ann, Method: MethodOTP, MFAID: first(ann)}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := s.SignIn(t.Context(), tt.in)
			switch {
			case !errors.Is(err, tt.want):
				t.Fatalf("SignIn = %+v, %v, want %v", out, err, tt.want)
			case err != nil:
				return
			case tt.token && (out.Token == "" || out.MFAID != ""):
				t.Fatalf("SignIn = %+v, want a token", out)
			case !tt.token && (out.Token != "" || out.MFAID == ""):
				t.Fatalf("SignIn = %+v, want an MFA challenge", out)
			case tt.token:
				if _, r, _, err := s.VerifyToken(out.Token, TokenAuth); err != nil || r.ID != tt.in.Record.ID {
					t.Errorf("the token does not verify for %s: %v", tt.in.Record.ID, err)
				}
			}
		})
	}
}

// TestRefresh: the authRule applies, a refreshable token is exchanged for
// a new one and any other comes back as it is.
func TestRefresh(t *testing.T) {
	s, _, _ := newTestStore(t)
	ann := signUp(t, s, "ann@example.com", "password1")
	users := mustCollection(t, s, UsersName)
	closed, err := s.UpdateCollection(users, input(t, `{"authRule":null}`))
	if err != nil {
		t.Fatal(err)
	}
	yes, no := true, false
	tests := []struct {
		name    string
		in      Refresh
		want    error
		renewed bool
	}{
		{"refreshable", Refresh{Collection: users, Record: ann, Token: "old", Claims: &Claims{Refreshable: &yes}}, nil, true},
		{"static", Refresh{Collection: users, Record: ann, Token: "old", Claims: &Claims{Refreshable: &no}}, nil, false},
		{"no refreshable claim", Refresh{Collection: users, Record: ann, Token: "old", Claims: &Claims{}}, nil, false},
		{"authRule null", Refresh{Collection: closed, Record: ann, Token: "old", Claims: &Claims{Refreshable: &yes}}, ErrAuthRule, false},
		{"authRule null, superuser", Refresh{Collection: closed, Record: ann, Token: "old", Claims: &Claims{Refreshable: &yes}, Superuser: true}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Refresh(t.Context(), tt.in)
			switch {
			case !errors.Is(err, tt.want):
				t.Fatalf("Refresh = %q, %v, want %v", got, err, tt.want)
			case err != nil:
			case tt.renewed && got == "old", !tt.renewed && got != "old":
				t.Errorf("Refresh = %q, renewed want %v", got, tt.renewed)
			}
		})
	}
}

// TestFingerprint: PocketBase's fingerprint, the hex MD5 of the client IP
// and the user agent cut at 300 bytes.
func TestFingerprint(t *testing.T) {
	long := strings.Repeat("a", 300)
	tests := []struct{ ip, ua, want string }{
		{"", "", "d41d8cd98f00b204e9800998ecf8427e"},                  // md5("")
		{"127.0.0.1", "curl/8.0", "b161818c7b8a5b29a0f8d95967863ddb"}, // md5("127.0.0.1curl/8.0"), by md5sum
		{"127.0.0.1", long + "bbb", Fingerprint("127.0.0.1", long)},   // cut at 300 bytes
	}
	for _, tt := range tests {
		if got := Fingerprint(tt.ip, tt.ua); got != tt.want {
			t.Errorf("Fingerprint(%q, %q) = %s, want %s", tt.ip, tt.ua, got, tt.want)
		}
	}
}

// TestSignInRecordsOrigin: a completed sign-in records its origin once per
// device when authAlert is enabled, none when it is disabled, and none for
// an MFA first factor.
func TestSignInRecordsOrigin(t *testing.T) {
	s, _, _ := newTestStore(t)
	ann := signUp(t, s, "ann@example.com", "password1")
	users := mustCollection(t, s, UsersName)
	fp1, fp2 := Fingerprint("192.0.2.1", "ua"), Fingerprint("192.0.2.2", "ua")
	for _, fp := range []string{fp1, fp1, fp2, ""} {
		if _, err := s.SignIn(t.Context(), SignIn{Collection: users, Record: ann, Method: MethodPassword, Origin: fp}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, o := range s.AuthOrigins(users, ann.ID) {
		got = append(got, o.Fingerprint)
	}
	slices.Sort(got)
	want := []string{fp1, fp2}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("origins after four sign-ins = %v, want %v", got, want)
	}

	off, err := s.UpdateCollection(users, input(t, `{"authAlert":{"enabled":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SignIn(t.Context(), SignIn{Collection: off, Record: ann, Method: MethodPassword, Origin: Fingerprint("192.0.2.3", "ua")}); err != nil {
		t.Fatal(err)
	}
	mfa := enableOTP(t, s, true)
	if _, err := s.SignIn(t.Context(), SignIn{Collection: mfa, Record: ann, Method: MethodPassword, Origin: Fingerprint("192.0.2.4", "ua")}); err != nil {
		t.Fatal(err)
	}
	if n := len(s.AuthOrigins(users, ann.ID)); n != 2 {
		t.Errorf("origins = %d after a sign-in with authAlert off and an MFA first factor, want still 2", n)
	}
}

// TestSignInAlert: a completed sign-in asks for the alert mail only from
// an origin new to a record that had signed in from another before, with
// authAlert enabled and an email to send to; never for an MFA first
// factor. The steps run in order on one store.
func TestSignInAlert(t *testing.T) {
	s, _, _ := newTestStore(t)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	noMail := *bob
	noMail.Email = "" // bob as a record without email
	on := mustCollection(t, s, UsersName)
	off, err := s.UpdateCollection(on, input(t, `{"authAlert":{"enabled":false}}`))
	if err != nil {
		t.Fatal(err)
	}
	on, err = s.UpdateCollection(off, input(t, `{"authAlert":{"enabled":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	phone, laptop, tablet := Fingerprint("192.0.2.1", "phone"), Fingerprint("192.0.2.1", "laptop"), Fingerprint("192.0.2.9", "tablet")
	steps := []struct {
		name   string
		c      *Collection
		rec    *Record
		origin string
		want   bool
	}{
		{"first sign-in", on, ann, phone, false},
		{"same device", on, ann, phone, false},
		{"new device", on, ann, laptop, true},
		{"that device again", on, ann, laptop, false},
		{"no origin", on, ann, "", false},
		{"new device, authAlert disabled", off, ann, tablet, false},
		{"another record's first sign-in", on, bob, phone, false},
		{"new device of a record without email", on, &noMail, laptop, false},
		{"new device, enabled again", on, ann, Fingerprint("198.51.100.1", "phone"), true},
		{"new device, by OTP", on, ann, Fingerprint("198.51.100.2", "phone"), true},
		{"new device, by OAuth2", on, ann, Fingerprint("198.51.100.3", "phone"), true},
	}
	for _, st := range steps {
		method := MethodPassword
		switch {
		case strings.HasSuffix(st.name, "by OTP"):
			method = MethodOTP
		case strings.HasSuffix(st.name, "by OAuth2"):
			method = MethodOAuth2
		}
		out, err := s.SignIn(t.Context(), SignIn{Collection: st.c, Record: st.rec, Method: method, Origin: st.origin})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if out.Alert != st.want {
			t.Errorf("%s: Alert = %v, want %v", st.name, out.Alert, st.want)
		}
	}
	mfa := enableOTP(t, s, true)
	out, err := s.SignIn(t.Context(), SignIn{Collection: mfa, Record: ann, Method: MethodPassword, Origin: Fingerprint("203.0.113.1", "x")})
	if err != nil || out.MFAID == "" || out.Alert {
		t.Errorf("MFA first factor from a new device = %+v, %v; want an MFA session and no alert", out, err)
	}
}
