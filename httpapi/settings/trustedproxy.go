package settings

import (
	"fmt"
	"strings"

	"strongbox/authn/validation"
)

// TrustedProxy names the headers that carry the client's address when the
// server sits behind a proxy. Empty: the connection's address is the client's.
type TrustedProxy struct {
	Headers       []string `json:"headers"`
	UseLeftmostIP bool     `json:"useLeftmostIP"`
}

// defaultTrustedProxy is the section of a new data dir: no proxy.
func defaultTrustedProxy() TrustedProxy { return TrustedProxy{Headers: []string{}} }

// clone returns the section with a list of its own, never nil.
func (p TrustedProxy) clone() TrustedProxy {
	p.Headers = append([]string{}, p.Headers...)
	return p
}

// validate checks that every header is an HTTP field name. Only the last
// bad one is reported, by its index.
func (p TrustedProxy) validate() validation.Errors {
	errs := validation.Errors{}
	for i, h := range p.Headers {
		if !validHeaderName(h) {
			errs["headers"] = validation.Errors{fmt.Sprint(i): validation.New(validation.CodeInvalidHeader, "Must be a valid HTTP header name.")}
		}
	}
	return errs
}

// validHeaderName reports whether h is an HTTP field name (RFC 9110 §5.1: a
// token of visible ASCII characters other than delimiters).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
