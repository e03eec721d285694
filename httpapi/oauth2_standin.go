package httpapi

// TODO(lead): this file stands in for the helpers the oauth2 client
// branch adds to strongbox/authn/oauth2 (Preset/Resolve, NewState,
// NewPKCE, AuthURL), with the same semantics (pocketbase-auth.md §1.1).
// Once they are on main, replace standinResolve with oauth2.Resolve
// (passing the collection's pkce as PKCEOverride), the three helpers with
// theirs, and delete this file; describeProvider in oauth2_methods.go is
// and handleAuthWithOAuth2 (the preset check of step 5) are the callers.

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/url"
	"strings"

	"strongbox/authn/oauth2"
)

// standinPreset is what auth-methods needs of a built-in provider.
type standinPreset struct {
	displayName, authURL string
	scopes               []string
	formPost             bool
}

var standinPresets = map[string]standinPreset{
	"google":    {"Google", "https://accounts.google.com/o/oauth2/v2/auth", []string{"https://www.googleapis.com/auth/userinfo.profile", "https://www.googleapis.com/auth/userinfo.email"}, false},
	"github":    {"GitHub", "https://github.com/login/oauth/authorize", []string{"read:user", "user:email"}, false},
	"gitlab":    {"GitLab", "https://gitlab.com/oauth/authorize", []string{"read_user"}, false},
	"microsoft": {"Microsoft", "https://login.microsoftonline.com/common/oauth2/v2.0/authorize", []string{"User.Read"}, false},
	"discord":   {"Discord", "https://discord.com/api/oauth2/authorize", []string{"identify", "email"}, false},
	"apple":     {"Apple", "https://appleid.apple.com/auth/authorize", []string{"name", "email"}, true},
	"oidc":      {"OIDC", "", []string{"openid", "email", "profile"}, false},
	"oidc2":     {"OIDC", "", []string{"openid", "email", "profile"}, false},
	"oidc3":     {"OIDC", "", []string{"openid", "email", "profile"}, false},
}

// standinResolve fills the display name and auth URL cfg left empty from
// the preset, and returns the preset's scopes; ok is false for a name
// without a preset.
func standinResolve(cfg oauth2.Config) (_ oauth2.Config, scopes []string, formPost, ok bool) {
	p, ok := standinPresets[cfg.Name]
	if !ok {
		return cfg, nil, false, false
	}
	if cfg.DisplayName == "" {
		cfg.DisplayName = p.displayName
	}
	if cfg.AuthURL == "" {
		cfg.AuthURL = p.authURL
	}
	return cfg, p.scopes, p.formPost, true
}

const standinAlphanumeric = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// standinRandom returns n characters of A-Za-z0-9 from r (nil =
// crypto/rand), without modulo bias.
func standinRandom(r io.Reader, n int) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	out := make([]byte, 0, n)
	buf := make([]byte, n)
	for len(out) < n {
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("oauth2: random: %w", err)
		}
		for _, b := range buf {
			if b < 248 && len(out) < n {
				out = append(out, standinAlphanumeric[b%62])
			}
		}
	}
	return string(out), nil
}

// standinPKCE returns a 43-character verifier and its S256 challenge
// (RFC 7636 §4.1, §4.2: BASE64URL(SHA256(verifier)), unpadded).
func standinPKCE(r io.Reader) (verifier, challenge string, err error) {
	if verifier, err = standinRandom(r, 43); err != nil {
		return "", "", err
	}
	sum := sha256.Sum256([]byte(verifier))
	return verifier, base64.RawURLEncoding.EncodeToString(sum[:]), nil
}

// standinAuthURL is the authorization URL: the parameters sorted by key,
// then the literal `&redirect_uri=` for the client to complete.
func standinAuthURL(cfg oauth2.Config, scopes []string, formPost bool, state, challenge string) string {
	q := url.Values{}
	q.Set("client_id", cfg.ClientID)
	if cfg.PKCE && challenge != "" {
		q.Set("code_challenge", challenge)
		q.Set("code_challenge_method", "S256")
	}
	if formPost {
		q.Set("response_mode", "form_post")
	}
	q.Set("response_type", "code")
	if len(scopes) > 0 {
		q.Set("scope", strings.Join(scopes, " "))
	}
	q.Set("state", state)
	sep := "?"
	if strings.Contains(cfg.AuthURL, "?") {
		sep = "&"
	}
	return cfg.AuthURL + sep + q.Encode() + "&redirect_uri="
}
