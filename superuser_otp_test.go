package main

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"

	"strongbox/authn"
	"strongbox/httpapi/app"
)

// TestSuperuserOTPCLI: `superuser otp` prints a usable OTP of a superuser,
// sends no mail, needs OTP on _superusers, and refuses a data dir in use.
func TestSuperuserOTPCLI(t *testing.T) {
	dir := t.TempDir()
	env := envOf("STRONGBOX_BCRYPT_COST", "4")
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), append(append([]string{"superuser"}, args...), "--dir", dir), env, &out, io.Discard)
		return out.String(), err
	}
	if _, err := cli("create", "a@example.com", "password123"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"OTP off", []string{"otp", "a@example.com"}, "OTP auth is not enabled for the _superusers collection"},
		{"invalid email", []string{"otp", "not-an-email"}, "invalid email"},
		{"password given", []string{"otp", "a@example.com", "password123"}, "otp takes no password"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := cli(tt.args...); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%v: err = %v, want %q", tt.args, err, tt.wantErr)
			}
		})
	}

	st, err := app.Open(app.Options{Dir: dir, BcryptCost: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Auth.UpdateCollection(st.Auth.Superusers(), authn.CollectionInput{Values: map[string]any{"otp": map[string]any{"enabled": true}}}); err != nil {
		t.Fatal(err)
	}
	// While the data dir is in use, the CLI refuses it.
	if _, err := cli("otp", "a@example.com"); err == nil || !strings.Contains(err.Error(), "in use") {
		t.Errorf("otp on a dir in use: %v, want the in-use error", err)
	}
	st.Close()

	if _, err := cli("otp", "nobody@example.com"); err == nil || !strings.Contains(err.Error(), "doesn't exist") {
		t.Errorf("otp for an unknown superuser: %v", err)
	}
	out, err := cli("otp", "a@example.com")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`otpId: +([a-z0-9]{15})\n +password: +([0-9]{8})\n +valid for 180 seconds`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("output %q: want the otpId, an 8-digit password and its validity", out)
	}
	st, err = app.Open(app.Options{Dir: dir, BcryptCost: 4}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if rec, err := st.Auth.AuthWithOTP(st.Auth.Superusers(), m[1], m[2]); err != nil || rec.Email != "a@example.com" {
		t.Errorf("the printed OTP: %v, %v", rec, err)
	}
}
