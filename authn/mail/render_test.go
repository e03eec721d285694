package mail

import "testing"

func TestRender(t *testing.T) {
	vars := map[string]string{
		VarAppName:           "Acme & Co",
		VarAppURL:            "http://localhost:8090",
		VarOTP:               "12345678",
		VarOTPID:             "abcdefghijklmno",
		VarToken:             "a.b.c",
		"RECORD:email":       "a<b>@example.com",
		"RECORD:name":        `"Tom" & 'Jerry'`,
		"RECORD:placeholder": "{OTP}",
	}
	tests := []struct {
		name, tpl string
		html      bool
		want      string
	}{
		{"empty", "", true, ""},
		{"no placeholder", "plain text", true, "plain text"},
		{"subject not escaped", "Verify your {APP_NAME} email {RECORD:email}", false, "Verify your Acme & Co email a<b>@example.com"},
		{"body escapes record", "<p>{RECORD:name}</p>", true, "<p>&#34;Tom&#34; &amp; &#39;Jerry&#39;</p>"},
		{"body escapes app name", "<p>{APP_NAME}</p>", true, "<p>Acme &amp; Co</p>"},
		{"link", `<a href="{APP_URL}/_/#/auth/confirm-verification/{TOKEN}">`, true, `<a href="http://localhost:8090/_/#/auth/confirm-verification/a.b.c">`},
		{"otp", "{OTP} {OTP_ID}", true, "12345678 abcdefghijklmno"},
		{"repeated", "{OTP}{OTP}", false, "1234567812345678"},
		{"unknown kept", "{NOPE} {RECORD:secret}", true, "{NOPE} {RECORD:secret}"},
		{"unclosed", "x {OTP", true, "x {OTP"},
		{"stray braces", "{ {OTP} }", true, "{ 12345678 }"},
		{"nested open", "{a{OTP}", true, "{a12345678"},
		{"value not re-expanded", "{RECORD:placeholder}", false, "{OTP}"},
		{"case sensitive", "{otp}", false, "{otp}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.tpl, vars, tt.html); got != tt.want {
				t.Errorf("Render(%q, html=%v) = %q, want %q", tt.tpl, tt.html, got, tt.want)
			}
		})
	}
}

// TestRenderHostile: a hostile value of every placeholder is inert in a
// body, in text and inside a quoted attribute value, and left as it is in
// a subject.
func TestRenderHostile(t *testing.T) {
	const hostile = `x"><script>alert('1')</script>&`
	const escaped = `x&#34;&gt;&lt;script&gt;alert(&#39;1&#39;)&lt;/script&gt;&amp;`
	for _, key := range []string{VarAppName, VarAppURL, VarOTP, VarOTPID, VarToken, VarRecordPrefix + "name"} {
		vars := map[string]string{key: hostile}
		ph := "{" + key + "}"
		tests := []struct {
			name, tpl string
			html      bool
			want      string
		}{
			{"text", "<p>" + ph + "</p>", true, "<p>" + escaped + "</p>"},
			{"attribute", `<a href="` + ph + `/x" title='` + ph + `'>go</a>`, true, `<a href="` + escaped + `/x" title='` + escaped + `'>go</a>`},
			{"subject", "Hi " + ph, false, "Hi " + hostile},
		}
		for _, tt := range tests {
			t.Run(key+" "+tt.name, func(t *testing.T) {
				if got := Render(tt.tpl, vars, tt.html); got != tt.want {
					t.Errorf("Render(%q, html=%v) = %q, want %q", tt.tpl, tt.html, got, tt.want)
				}
			})
		}
	}
	// The URL of the issue, which the settings now refuse, is inert
	// however it got in.
	got := Render(`<a href="{APP_URL}/verify">`, map[string]string{VarAppURL: `https://ok.example.com/"><script>x</script>`}, true)
	if want := `<a href="https://ok.example.com/&#34;&gt;&lt;script&gt;x&lt;/script&gt;/verify">`; got != want {
		t.Errorf("APP_URL in href = %q, want %q", got, want)
	}
}

func TestRenderTemplate(t *testing.T) {
	s, b := RenderTemplate("OTP for {APP_NAME}", "<p>{RECORD:name}: {OTP}</p>", map[string]string{
		VarAppName: "A<B", VarOTP: "42", "RECORD:name": "x&y",
	})
	if want := "OTP for A<B"; s != want {
		t.Errorf("subject = %q, want %q", s, want)
	}
	if want := "<p>x&amp;y: 42</p>"; b != want {
		t.Errorf("body = %q, want %q", b, want)
	}
}
