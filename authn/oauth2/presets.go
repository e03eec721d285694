package oauth2

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// preset is a built-in provider: its endpoints, scopes, PKCE default and
// how its user JSON maps to a User, after PocketBase v0.31.0's providers.
type preset struct {
	displayName string
	authURL     string
	tokenURL    string
	userInfoURL string
	scopes      []string
	pkce        bool

	// idToken: the user comes from the token response's id_token, not
	// from a user-info endpoint (apple; oidc without userInfoURL).
	idToken bool
	// jwksURL and issuer: the id_token's signing keys and issuer (apple);
	// extra.jwksURL and extra.issuers override them.
	jwksURL string
	issuer  string
	// formPost: the authorization URL asks for response_mode=form_post
	// (apple posts the code to the redirect URL).
	formPost bool
	// bodyAuth: the token endpoint takes the client credentials in the
	// body only (apple), so Basic is not tried first.
	bodyAuth bool
	// emails: when the user JSON has no email, GET <userInfoURL>/emails
	// and take the primary verified one (github).
	emails bool
	// user maps the provider's user JSON (or id_token claims) to a User.
	user func(raw map[string]any) User
}

// presets are the built-in providers. PocketBase v0.31.0 registers more
// names; these are the ones strongbox knows how to talk to.
var presets = map[string]*preset{
	"google": {
		displayName: "Google",
		authURL:     "https://accounts.google.com/o/oauth2/v2/auth",
		tokenURL:    "https://oauth2.googleapis.com/token",
		userInfoURL: "https://www.googleapis.com/oauth2/v3/userinfo",
		scopes:      []string{"https://www.googleapis.com/auth/userinfo.profile", "https://www.googleapis.com/auth/userinfo.email"},
		pkce:        true,
		user:        oidcUser,
	},
	"github": {
		displayName: "GitHub",
		authURL:     "https://github.com/login/oauth/authorize",
		tokenURL:    "https://github.com/login/oauth/access_token",
		userInfoURL: "https://api.github.com/user",
		scopes:      []string{"read:user", "user:email"},
		pkce:        true,
		emails:      true,
		user:        githubUser,
	},
	"gitlab": {
		displayName: "GitLab",
		authURL:     "https://gitlab.com/oauth/authorize",
		tokenURL:    "https://gitlab.com/oauth/token",
		userInfoURL: "https://gitlab.com/api/v4/user",
		scopes:      []string{"read_user"},
		pkce:        true,
		user:        gitlabUser,
	},
	"microsoft": {
		displayName: "Microsoft",
		authURL:     "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
		tokenURL:    "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		userInfoURL: "https://graph.microsoft.com/v1.0/me",
		scopes:      []string{"User.Read"},
		pkce:        true,
		user:        microsoftUser,
	},
	"discord": {
		displayName: "Discord",
		authURL:     "https://discord.com/api/oauth2/authorize",
		tokenURL:    "https://discord.com/api/oauth2/token",
		userInfoURL: "https://discord.com/api/users/@me",
		scopes:      []string{"identify", "email"},
		pkce:        true,
		user:        discordUser,
	},
	"apple": {
		displayName: "Apple",
		authURL:     "https://appleid.apple.com/auth/authorize",
		tokenURL:    "https://appleid.apple.com/auth/token",
		scopes:      []string{"name", "email"},
		pkce:        true,
		idToken:     true,
		jwksURL:     "https://appleid.apple.com/auth/keys",
		issuer:      "https://appleid.apple.com",
		formPost:    true,
		bodyAuth:    true,
		user:        oidcUser,
	},
	"oidc":  oidcPreset(),
	"oidc2": oidcPreset(),
	"oidc3": oidcPreset(),
}

// oidcPreset is the generic OpenID Connect provider: no endpoints of its
// own (authURL and tokenURL must be configured), claims from the
// userInfoURL when set, else from the validated id_token.
func oidcPreset() *preset {
	return &preset{
		displayName: "OIDC",
		scopes:      []string{"openid", "email", "profile"},
		pkce:        true,
		user:        oidcUser,
	}
}

// Known reports whether name is a provider strongbox knows.
func Known(name string) bool {
	_, ok := presets[name]
	return ok
}

// Names returns the known provider names, sorted.
func Names() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the defaults of the provider name (endpoints, scopes,
// PKCE, display name), with no client credentials; false when the name
// is unknown.
func Preset(name string) (Config, bool) {
	p, ok := presets[name]
	if !ok {
		return Config{}, false
	}
	return Config{
		Name:        name,
		AuthURL:     p.authURL,
		TokenURL:    p.tokenURL,
		UserInfoURL: p.userInfoURL,
		DisplayName: p.displayName,
		PKCE:        p.pkce,
		Scopes:      slices.Clone(p.scopes),
	}, true
}

// Resolve fills what the collection left empty in c with the preset's
// defaults, as PocketBase v0.31.0 does (non-empty URLs and displayName
// override, a non-nil pkce overrides the PKCE default). For an unknown
// name it returns c with the display name defaulting to the name.
func Resolve(c Config) Config {
	d, ok := Preset(c.Name)
	if !ok {
		d = Config{DisplayName: c.Name, PKCE: c.PKCE}
	}
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&c.AuthURL, d.AuthURL)
	fill(&c.TokenURL, d.TokenURL)
	fill(&c.UserInfoURL, d.UserInfoURL)
	fill(&c.DisplayName, d.DisplayName)
	if len(c.Scopes) == 0 {
		c.Scopes = d.Scopes
	}
	c.PKCE = d.PKCE
	if c.PKCEOverride != nil {
		c.PKCE = *c.PKCEOverride
	}
	return c
}

// extra is the provider-specific `extra` object. Only OIDC (and apple)
// read it: jwksURL, the id_token's signing keys; issuers, the accepted
// `iss` values, as in PocketBase v0.31.0's OIDC provider.
type extra struct {
	JWKSURL string   `json:"jwksURL"`
	Issuers []string `json:"issuers"`
}

func parseExtra(raw json.RawMessage) (extra, error) {
	var e extra
	if len(raw) == 0 || string(raw) == "null" {
		return e, nil
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("oauth2: extra: %w", err)
	}
	return e, nil
}

// The user mappings. Each keeps the whole JSON as Raw. Email is filled
// only when the provider says it is verified (EmailVerified), except where
// the provider only ever returns verified addresses (noted per mapping).

// oidcUser maps OpenID Connect standard claims (google, apple, oidc):
// email only when email_verified is true (or "true", as apple sends it).
func oidcUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "sub"),
		Name:      str(raw, "name"),
		Username:  str(raw, "preferred_username"),
		AvatarURL: str(raw, "picture"),
		Raw:       raw,
	}
	if truthy(raw["email_verified"]) {
		u.Email, u.EmailVerified = str(raw, "email"), true
	}
	return u
}

// githubUser: GitHub lets a user publish only a verified address as the
// profile email, so it is trusted; without one the client reads the
// emails API (preset.emails).
func githubUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "login"),
		Email:     str(raw, "email"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

// gitlabUser: `email` is the account's primary email, which GitLab
// requires to be confirmed before sign-in.
func gitlabUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "username"),
		Email:     str(raw, "email"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

// microsoftUser: Graph's `mail` is whatever the tenant set and is not
// verified (the "nOAuth" account takeover), so it is never trusted:
// EmailVerified stays false.
func microsoftUser(raw map[string]any) User {
	return User{
		ID:    str(raw, "id"),
		Name:  str(raw, "displayName"),
		Email: str(raw, "mail"),
		Raw:   raw,
	}
}

// discordUser: email only when `verified`; the avatar is built from the
// CDN path Discord documents.
func discordUser(raw map[string]any) User {
	u := User{
		ID:       str(raw, "id"),
		Name:     str(raw, "global_name"),
		Username: str(raw, "username"),
		Raw:      raw,
	}
	if u.Name == "" {
		u.Name = u.Username
	}
	if a := str(raw, "avatar"); a != "" && u.ID != "" {
		u.AvatarURL = "https://cdn.discordapp.com/avatars/" + url.PathEscape(u.ID) + "/" + url.PathEscape(a) + ".png"
	}
	if truthy(raw["verified"]) {
		u.Email, u.EmailVerified = str(raw, "email"), true
	}
	return u
}

// str reads raw[key] as a string: strings as they are, numbers (decoded
// as json.Number) in their JSON spelling, anything else as "".
func str(raw map[string]any, key string) string {
	switch v := raw[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// truthy is a JSON true or the string "true" (apple sends booleans as
// strings in its id_token).
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}
