package mail

import (
	"html"
	"strings"
)

// The placeholders a mail template may hold, as in PocketBase. Vars
// keys are written without braces: "APP_NAME", "OTP", "RECORD:email".
const (
	VarAppName = "APP_NAME" // meta.appName
	VarAppURL  = "APP_URL"  // meta.appURL
	VarOTP     = "OTP"      // the one-time password (OTP mail only)
	VarOTPID   = "OTP_ID"   // the OTP's id (OTP mail only)
	VarToken   = "TOKEN"    // the verification, reset or email-change token
	// VarAuthMethod is strongbox's own: the methods of the sign-in a
	// new-login alert is about ("password", "password+totp", "passkey").
	VarAuthMethod = "AUTH_METHOD"
	// VarRecordPrefix prefixes a record field: "RECORD:email" fills
	// {RECORD:email}. A caller passes only non-hidden fields, as
	// PocketBase does.
	VarRecordPrefix = "RECORD:"
)

// Render returns tpl with every {KEY} whose KEY is in vars replaced by its
// value; placeholders not in vars, and braces that are no placeholder, are
// left as they are. Values are inserted once: a value that itself holds a
// placeholder is not expanded again.
//
// With htmlEscape (a body, which is HTML), every value is HTML-escaped
// (html.EscapeString: & < > " and '), which makes it inert both in text
// and inside a quoted attribute value such as href="{APP_URL}/...". This
// is stricter than PocketBase v0.31.0, which escapes only the record
// fields and inserts APP_NAME and APP_URL verbatim; the OTP,
// OTP_ID and TOKEN values hold no HTML specials, so escaping leaves them
// as they are.
//
// Without htmlEscape (a subject, which is plain text) nothing is escaped.
// PocketBase escapes record fields in subjects too, showing "&amp;" in
// a mail client; strongbox does not. A subject must still hold no CR or
// LF: Render leaves that check to the Sender, which refuses such a message.
func Render(tpl string, vars map[string]string, htmlEscape bool) string {
	if !strings.Contains(tpl, "{") || len(vars) == 0 {
		return tpl
	}
	var b strings.Builder
	b.Grow(len(tpl))
	for {
		i := strings.IndexByte(tpl, '{')
		if i < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		j := strings.IndexByte(tpl[i+1:], '}')
		if j < 0 {
			b.WriteString(tpl)
			return b.String()
		}
		key := tpl[i+1 : i+1+j]
		if k := strings.IndexByte(key, '{'); k >= 0 {
			// "{a{B}": the placeholder can only start at the inner brace.
			b.WriteString(tpl[:i+1+k])
			tpl = tpl[i+1+k:]
			continue
		}
		v, ok := vars[key]
		if !ok {
			b.WriteString(tpl[:i+2+j])
			tpl = tpl[i+2+j:]
			continue
		}
		b.WriteString(tpl[:i])
		if htmlEscape {
			v = html.EscapeString(v)
		}
		b.WriteString(v)
		tpl = tpl[i+2+j:]
	}
}

// RenderTemplate renders a subject (plain) and a body (HTML) with the same
// vars: a convenience for the callers that hold a collection's template.
func RenderTemplate(subject, body string, vars map[string]string) (renderedSubject, renderedBody string) {
	return Render(subject, vars, false), Render(body, vars, true)
}
