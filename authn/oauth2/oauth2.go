package oauth2

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Config is one provider as a collection configures it (the collection
// option oauth2.providers[i]), with the preset's defaults filled in for
// the fields left empty.
type Config struct {
	Name         string
	ClientID     string
	ClientSecret string
	AuthURL      string
	TokenURL     string
	UserInfoURL  string
	DisplayName  string
	PKCE         bool
	Extra        json.RawMessage

	// PKCEOverride is the collection's nullable `pkce` option: nil keeps
	// the preset's default, otherwise Resolve sets PKCE to it.
	PKCEOverride *bool
	// Scopes are requested in the authorization URL; Resolve sets the
	// preset's scopes when empty.
	Scopes []string
}

// User is what a provider says of the signed-in user, with the tokens
// the exchange returned: the `meta` of an OAuth2 sign-in's answer.
type User struct {
	ID            string
	Name          string
	Username      string
	Email         string
	EmailVerified bool // only a verified email may match an existing record
	AvatarURL     string
	AccessToken   string
	RefreshToken  string
	Expiry        time.Time
	Raw           map[string]any
}

// Exchanger turns an authorization code into a User: the token exchange
// (with the PKCE verifier when the provider uses PKCE) and the user-info
// fetch (or a validated id_token). Its errors tell which step failed:
// ErrToken or ErrUser (errors.Is).
type Exchanger interface {
	Exchange(ctx context.Context, cfg Config, code, codeVerifier, redirectURL string) (*User, error)
}

// Sentinel errors of Exchange; httpapi/api answers them 400 "Failed to fetch
// OAuth2 token." and "Failed to fetch OAuth2 user.".
var (
	ErrToken = errors.New("oauth2: failed to fetch the token")
	ErrUser  = errors.New("oauth2: failed to fetch the user")
)
