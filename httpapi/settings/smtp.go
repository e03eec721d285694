package settings

import (
	"net"
	"strings"

	"strongbox/authn/validation"
)

// SMTP configures outgoing mail.
type SMTP struct {
	Enabled    bool   `json:"enabled"`
	Port       int    `json:"port"`
	Host       string `json:"host"`
	Username   string `json:"username"`
	Password   string `json:"password,omitempty"`
	AuthMethod string `json:"authMethod"`
	TLS        bool   `json:"tls"`
	LocalName  string `json:"localName"`
}

// defaultSMTP is the section of a new data dir: disabled.
func defaultSMTP() SMTP { return SMTP{Port: 587, Host: "smtp.example.com"} }

// public returns the section without its secret, the password.
func (s SMTP) public() SMTP {
	s.Password = ""
	return s
}

// keepSecret keeps the stored password when an update leaves it empty.
func (s *SMTP) keepSecret(cur SMTP) {
	if s.Password == "" {
		s.Password = cur.Password
	}
}

// validate checks the section as PocketBase (SMTPConfig.Validate) does:
// host is.Host, required when enabled; port required when enabled,
// Min(0); authMethod in LOGIN, PLAIN or empty; localName is.Host.
func (s SMTP) validate() validation.Errors {
	errs := validation.Errors{}
	switch {
	case s.Host == "" && s.Enabled:
		errs["host"] = errRequired
	case s.Host != "" && !validHost(s.Host):
		errs["host"] = errHost
	}
	switch {
	case s.Port < 0:
		errs["port"] = errMin(0)
	case s.Port == 0 && s.Enabled:
		errs["port"] = errRequired
	}
	if a := s.AuthMethod; a != "" && a != "PLAIN" && a != "LOGIN" {
		errs["authMethod"] = validation.InInvalid(nil)
	}
	if s.LocalName != "" && !validHost(s.LocalName) {
		errs["localName"] = errHost
	}
	return errs
}

var errHost = validation.IsHost()

// validHost reports whether s is an IP address or a DNS name (letters,
// digits, hyphens and dots, labels of 1 to 63 characters, at most 253 in
// all): what an SMTP host or an EHLO name may be, and never a CR or LF.
func validHost(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
