package validation

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
)

// The formats more than one input shares, each checked in one place. Each
// answers with its failure of the vocabulary where the format fails.

// HTTPURL parses s as an absolute http or https URL with a host: the URL
// rule of a record's url field, of settings.meta.appURL and the S3
// endpoints, and of the OAuth2 provider URLs, which the server fetches
// (file:, gopher: and the like refused). It returns the URL, or why s is
// none; a check answers the failure with IsURL.
func HTTPURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL scheme %q is not http(s)", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("URL has no host")
	}
	return u, nil
}

// Email reports whether s is a bare email address such as
// user@example.com, as net/mail parses it and nothing more: no display
// name, angle brackets, comment or quoted local part (the parsed address
// must be s itself). Single-label domains such as localhost are accepted.
// It is the format of every email strongbox takes (records, settings,
// account flows); a length bound, where there is one, is the caller's. A
// check answers the failure with IsEmail.
func Email(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}
