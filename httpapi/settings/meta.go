package settings

import (
	"strings"

	"strongbox/authn/validation"
)

// Meta describes the application.
type Meta struct {
	AppName       string `json:"appName"`
	AppURL        string `json:"appURL"`
	SenderName    string `json:"senderName"`
	SenderAddress string `json:"senderAddress"`
	HideControls  bool   `json:"hideControls"`
}

// defaultMeta is the section of a new data dir.
func defaultMeta() Meta {
	return Meta{AppName: "Acme", AppURL: "http://localhost:8090", SenderName: "Support", SenderAddress: "support@example.com"}
}

// validate checks the section: appName required, at most 255 bytes;
// appURL required, an absolute http(s) URL (validation.HTTPURL) of URL
// characters only (urlChars); senderName required; senderAddress required,
// an email address.
func (m Meta) validate() validation.Errors {
	errs := validation.Errors{}
	switch {
	case m.AppName == "":
		errs["appName"] = errRequired
	case len(m.AppName) > 255:
		errs["appName"] = validation.LengthTooLong(255)
	}
	switch _, err := validation.HTTPURL(m.AppURL); {
	case m.AppURL == "":
		errs["appURL"] = errRequired
	case err != nil || !urlChars(m.AppURL):
		errs["appURL"] = errURL
	}
	if m.SenderName == "" {
		errs["senderName"] = errRequired
	}
	switch {
	case m.SenderAddress == "":
		errs["senderAddress"] = errRequired
	case !validation.Email(m.SenderAddress):
		errs["senderAddress"] = validation.IsEmail()
	}
	return errs
}

// urlChars reports whether s holds none of the ASCII characters RFC 3986
// leaves out of a URL: controls, space and "<>\^`{|}. Go's URL parser
// lets them through in a path, and PocketBase v0.31.0 accepts them in
// appURL, which a mail template inserts into HTML (issue 20: an appURL
// of https://ok.example.com/"><script>... reached the mail raw). Other
// bytes, such as the UTF-8 of an internationalized name, pass.
func urlChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == 0x7f || strings.IndexByte(`"<>\^`+"`{|}", c) >= 0 {
			return false
		}
	}
	return true
}
