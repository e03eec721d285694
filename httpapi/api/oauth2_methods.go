package api

import (
	"strongbox/authn"
	"strongbox/authn/oauth2"
)

// providerInfo is one provider of auth-methods, keys in PocketBase's
// order. Its state and PKCE values are fresh on every call and kept
// nowhere: the client keeps them (interface §5 rule 11: the client checks
// the state).
type providerInfo struct {
	Name                string `json:"name"`
	DisplayName         string `json:"displayName"`
	State               string `json:"state"`
	AuthURL             string `json:"authURL"`
	AuthURLAlias        string `json:"authUrl"`
	CodeVerifier        string `json:"codeVerifier"`
	CodeChallenge       string `json:"codeChallenge"`
	CodeChallengeMethod string `json:"codeChallengeMethod"`
}

// oauth2Providers lists the providers of c for auth-methods. A provider
// that cannot be set up (no preset, or no authorization URL) is left out,
// as PocketBase skips one that fails to initialize.
func (s *Server) oauth2Providers(c *authn.Collection) ([]any, error) {
	out := []any{}
	if !c.OAuth2.Enabled || c.IsSuperusers() {
		return out, nil
	}
	for i := range c.OAuth2.Providers {
		cfg := oauth2Config(&c.OAuth2.Providers[i])
		if !oauth2.Known(cfg.Name) || cfg.AuthURL == "" {
			continue
		}
		state, err := oauth2.NewState(s.rand)
		if err != nil {
			return nil, err
		}
		p := providerInfo{Name: cfg.Name, DisplayName: cfg.DisplayName, State: state}
		if p.DisplayName == "" {
			p.DisplayName = cfg.Name
		}
		if cfg.PKCE {
			if p.CodeVerifier, p.CodeChallenge, err = oauth2.NewPKCE(s.rand); err != nil {
				return nil, err
			}
			p.CodeChallengeMethod = "S256"
		}
		p.AuthURL = oauth2.AuthURL(cfg, state, p.CodeChallenge, "")
		p.AuthURLAlias = p.AuthURL
		out = append(out, p)
	}
	return out, nil
}
