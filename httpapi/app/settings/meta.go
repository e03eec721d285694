package settings

import "strongbox/authn/validation"

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
// appURL required, a URL; senderName required; senderAddress required,
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
	case err != nil:
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
