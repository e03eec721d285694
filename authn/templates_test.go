package authn

import (
	"strings"
	"testing"
)

// TestDefaultTemplates checks that a new auth collection gets
// PocketBase's subjects and the links its clients expect.
func TestDefaultTemplates(t *testing.T) {
	o, err := defaultAuthOptions(NewRandom(nil), 604800)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		got     Template
		subject string
		bodyHas string
	}{
		{"verification", o.VerificationTemplate, "Verify your {APP_NAME} email", `href="{APP_URL}/_/#/auth/confirm-verification/{TOKEN}"`},
		{"reset", o.ResetPasswordTemplate, "Reset your {APP_NAME} password", `href="{APP_URL}/_/#/auth/confirm-password-reset/{TOKEN}"`},
		{"email change", o.ConfirmEmailChangeTemplate, "Confirm your {APP_NAME} new email address", `href="{APP_URL}/_/#/auth/confirm-email-change/{TOKEN}"`},
		{"otp", o.OTP.EmailTemplate, "OTP for {APP_NAME}", "<strong>{OTP}</strong>"},
		{"alert", o.AuthAlert.EmailTemplate, "Login from a new location", "{APP_NAME} account from a new location."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got.Subject != tt.subject {
				t.Errorf("Subject = %q, want %q", tt.got.Subject, tt.subject)
			}
			if !strings.Contains(tt.got.Body, tt.bodyHas) {
				t.Errorf("Body = %q, want it to contain %q", tt.got.Body, tt.bodyHas)
			}
			if !strings.HasSuffix(tt.got.Body, "  Thanks,<br/>\n  {APP_NAME} team\n</p>") {
				t.Errorf("Body = %q, want PocketBase's sign-off", tt.got.Body)
			}
		})
	}
}
