package authn

import (
	"encoding/json"
	"fmt"
	"slices"

	"strongbox/authn/validation"
)

// ProviderNames are the OAuth2 provider names a collection may configure:
// the providers PocketBase v0.31.0 registers, so
// that a collection definition moved from PocketBase is accepted as it is.
// Sorted. The endpoints and user-info mapping of each live in package
// authn/oauth2, which has a preset for every one of these names (a test
// there keeps the two lists equal); a preset whose URLs are not all
// configured (mailcow, oidc) fails at sign-in, not here.
var ProviderNames = []string{
	"apple", "bitbucket", "box", "discord", "facebook", "gitea", "gitee", "github", "gitlab",
	"google", "instagram2", "kakao", "lark", "linear", "livechat", "mailcow", "microsoft",
	"monday", "notion", "oidc", "oidc2", "oidc3", "patreon", "planningcenter", "spotify",
	"strava", "trakt", "twitch", "twitter", "vk", "wakatime", "yandex",
}

// KnownProvider reports whether name is one of ProviderNames.
func KnownProvider(name string) bool {
	_, ok := slices.BinarySearch(ProviderNames, name)
	return ok
}

// Provider returns the provider named name of c's OAuth2 options, or nil.
func (o *OAuth2) Provider(name string) *Provider {
	for i := range o.Providers {
		if o.Providers[i].Name == name {
			return &o.Providers[i]
		}
	}
	return nil
}

// validateProviders checks the oauth2.providers list of a collection save,
// with PocketBase v0.31.0's codes and messages: each name registered and
// given once, clientId and clientSecret required, the three URLs empty or
// absolute http(s) URLs (validation.HTTPURL) without credentials. It is
// the one check of the providers: what a sign-in needs beyond it (a
// preset, an OIDC provider's endpoints) fails at sign-in.
func validateProviders(o *OAuth2, errs validation.Errors) {
	perrs := validation.Errors{}
	seen := map[string]bool{}
	for i, p := range o.Providers {
		e := validation.Errors{}
		switch {
		case p.Name == "":
			e["name"] = validation.Required()
		case !KnownProvider(p.Name):
			e["name"] = &validation.Error{Code: validation.CodeMissingProvider,
				Message: fmt.Sprintf("Invalid or missing provider with name %s.", p.Name), Params: map[string]any{"name": p.Name}}
		case seen[p.Name]:
			e["name"] = &validation.Error{Code: validation.CodeDuplicatedProvider,
				Message: fmt.Sprintf("The provider %s is already registered.", p.Name), Params: map[string]any{"name": p.Name}}
		}
		seen[p.Name] = true
		if p.ClientID == "" {
			e["clientId"] = validation.Required()
		}
		if p.ClientSecret == "" {
			e["clientSecret"] = validation.Required()
		}
		for key, v := range map[string]string{"authURL": p.AuthURL, "tokenURL": p.TokenURL, "userInfoURL": p.UserInfoURL} {
			// A provider URL carries no credentials: the server
			// fetches it.
			if u, err := validation.HTTPURL(v); v != "" && (err != nil || u.User != nil) {
				e[key] = validation.IsURL()
			}
		}
		if len(e) > 0 {
			perrs[fmt.Sprint(i)] = e
		}
	}
	if len(perrs) > 0 {
		errs.Sub("oauth2")["providers"] = perrs
	}
}

// keepClientSecrets sets the providers of n from the input's
// oauth2.providers (sent, the input as generic JSON), decoded afresh: a
// JSON list decoded over the stored one would merge each element into the
// stored provider at the same index, whatever its name. A provider whose
// input left clientSecret out (or empty) keeps the secret stored for the
// provider of the same name, as the settings do for the SMTP password: the
// API never reports a secret, so a client that sends back what it read
// must not erase it.
func keepClientSecrets(n, cur *Collection, sent map[string]any) error {
	o, _ := sent["oauth2"].(map[string]any)
	raw, ok := o["providers"]
	if !ok {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	var ps []Provider
	if err := json.Unmarshal(b, &ps); err != nil {
		return fmt.Errorf("%w: oauth2.providers: %v", ErrInvalidJSON, err)
	}
	if ps == nil {
		ps = []Provider{}
	}
	for i := range ps {
		p := &ps[i]
		if p.ClientSecret != "" {
			continue
		}
		if old := cur.OAuth2.Provider(p.Name); old != nil {
			p.ClientSecret = old.ClientSecret
		}
	}
	n.OAuth2.Providers = ps
	return nil
}
