package authn

import (
	"errors"
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
