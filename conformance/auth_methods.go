package conformance

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
)

var authMethodsRequirements = []*Requirement{
	{
		ID:      "AUTH-METHODS-001",
		Source:  SourceDocument,
		Section: "§4.5 auth-methods; §2.7",
		Name:    "auth-methods descriptor for users",
		Text: "GET auth-methods of users (no token needed) answers 200 with password.enabled (boolean), " +
			"oauth2.enabled (boolean), oauth2.providers (array) and mfa.enabled (boolean) (§2.7), and, when sent, " +
			"password.identityFields (array of strings) and otp.enabled (boolean).",
		Run: func(ctx context.Context, c *Client) error {
			_, err := fetchAuthMethods(ctx, c, "users")
			return err
		},
	},
	{
		ID:      "AUTH-METHODS-002",
		Source:  SourceDocument,
		Section: "§4.5 auth-methods; §2.7; §5.4",
		Name:    "auth-methods descriptor for _superusers",
		Text: "GET auth-methods of _superusers answers 200 with the same descriptor shape, password.enabled " +
			"true, and oauth2.enabled false (OAuth2 is not supported for superusers).",
		Run: func(ctx context.Context, c *Client) error {
			d, err := fetchAuthMethods(ctx, c, "_superusers")
			if err != nil {
				return err
			}
			if !d.passwordEnabled {
				return Mismatch("password.enabled true for _superusers (the suite just logged in with a password)", "false")
			}
			if d.oauth2Enabled {
				return Mismatch("oauth2.enabled false for _superusers", "true")
			}
			return nil
		},
	},
	{
		ID:      "AUTH-METHODS-003",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-methods; PocketBase v0.31.0 (the document is silent on unknown collection)",
		Name:    "auth-methods of an unknown collection",
		Text:    "GET auth-methods of a collection that does not exist answers 404 \"" + msgNoCollection + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/collections/cf_missing_"+newNonce(8)+"/auth-methods", "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNoCollection)
			return err
		},
	},
	{
		ID:      "AUTH-METHODS-004",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-methods; PocketBase v0.31.0 (the document is silent on non-auth collection)",
		Name:    "auth-methods of a non-auth collection",
		Text:    "GET auth-methods of a base collection (one the check creates, or _externalAuths where the server creates none) answers 404 \"" + msgNoAuthColl + "\".",
		Run: withNonAuthCollection(func(ctx context.Context, c *Client, name string) error {
			r, err := c.get(ctx, "/api/collections/"+name+"/auth-methods", "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusNotFound, msgNoAuthColl)
			return err
		}),
	},
	{
		ID:      "AUTH-METHODS-005",
		Source:  SourcePocketBase,
		Section: "§4.5 auth-methods; §2.7; PocketBase v0.31.0 (the document is silent on identity fields and provisioning)",
		Name:    "auth-methods follows the collection options",
		Text: "For a new auth collection auth-methods answers 200 and reports password.enabled true with \"email\" among " +
			"identityFields; after passwordAuth.enabled is set to false it reports password.enabled false.",
		Run: withCollection("auth", func(ctx context.Context, c *Client, name string) error {
			d, err := fetchAuthMethods(ctx, c, name)
			if err != nil {
				return err
			}
			if !d.passwordEnabled {
				return Mismatch("password.enabled true on a new auth collection", "false")
			}
			found := false
			for _, f := range d.identityFields {
				found = found || f == "email"
			}
			if !found {
				return Mismatch("\"email\" among password.identityFields", fmt.Sprint(d.identityFields))
			}
			if err := c.patchCollection(ctx, name, map[string]any{"passwordAuth": map[string]any{"enabled": false}}); err != nil {
				return err
			}
			d, err = fetchAuthMethods(ctx, c, name)
			if err != nil {
				return err
			}
			if d.passwordEnabled {
				return Mismatch("password.enabled false after disabling password auth", "true")
			}
			return nil
		}),
	},
	{
		ID:      "AUTH-METHODS-006",
		Source:  SourceDocument,
		Section: "§4.1 (every GET endpoint); §4.5 auth-methods; §2.7",
		Name:    "auth-methods with fields",
		Text: "GET auth-methods of users?fields=password.enabled,mfa answers 200 with an object of exactly the keys " +
			"password (holding only enabled, a boolean) and mfa (an object with enabled, a boolean).",
		Run: func(ctx context.Context, c *Client) error {
			r, m, err := c.getOK(ctx, "/api/collections/users/auth-methods?fields="+url.QueryEscape("password.enabled,mfa"), "")
			if err != nil {
				return err
			}
			if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, []string{"mfa", "password"}) {
				return Mismatch("exactly the keys mfa, password", fmt.Sprint(got)+" in "+r.String())
			}
			pw, _ := getObject(m, "password")
			if _, ok := getBool(pw, "enabled"); !ok || len(pw) != 1 {
				return Mismatch(`password holding only enabled (a boolean)`, r.String())
			}
			mfa, _ := getObject(m, "mfa")
			if _, ok := getBool(mfa, "enabled"); !ok {
				return Mismatch("mfa.enabled a boolean", r.String())
			}
			return nil
		},
	},
}

// authMethods is the part of the §2.7 descriptor the suite checks.
type authMethods struct {
	passwordEnabled bool
	identityFields  []string
	oauth2Enabled   bool
}

// fetchAuthMethods loads and shape-checks the descriptor of collection.
func fetchAuthMethods(ctx context.Context, c *Client, collection string) (*authMethods, error) {
	r, m, err := c.getOK(ctx, "/api/collections/"+seg(collection)+"/auth-methods", "")
	if err != nil {
		return nil, err
	}
	section := func(name string) (map[string]any, error) {
		o, ok := getObject(m, name)
		if !ok {
			return nil, Mismatch(fmt.Sprintf("%s to be an object", name), r.String())
		}
		return o, nil
	}
	boolAt := func(o map[string]any, sect, key string) (bool, error) {
		b, ok := getBool(o, key)
		if !ok {
			return false, Mismatch(fmt.Sprintf("%s.%s to be a boolean", sect, key), r.String())
		}
		return b, nil
	}
	out := &authMethods{}
	pw, err := section("password")
	if err != nil {
		return nil, err
	}
	if out.passwordEnabled, err = boolAt(pw, "password", "enabled"); err != nil {
		return nil, err
	}
	// §2.7 names password.enabled, oauth2.enabled and .providers and
	// mfa.enabled; identityFields and otp are PocketBase's further keys,
	// required under its readings and checked wherever they are sent.
	fields, ok := getArray(pw, "identityFields")
	if _, present := pw["identityFields"]; !ok && (present || c.strict()) {
		return nil, Mismatch("password.identityFields to be an array", r.String())
	}
	for _, f := range fields {
		s, ok := f.(string)
		if !ok {
			return nil, Mismatch("password.identityFields to hold strings", r.String())
		}
		out.identityFields = append(out.identityFields, s)
	}
	oa, err := section("oauth2")
	if err != nil {
		return nil, err
	}
	if out.oauth2Enabled, err = boolAt(oa, "oauth2", "enabled"); err != nil {
		return nil, err
	}
	providers, ok := getArray(oa, "providers")
	if !ok {
		return nil, Mismatch("oauth2.providers to be an array", r.String())
	}
	for _, p := range providers {
		po, ok := p.(map[string]any)
		if !ok {
			return nil, Mismatch("oauth2.providers to hold objects", r.String())
		}
		if _, ok := getString(po, "name"); !ok {
			return nil, Mismatch("every oauth2 provider to have a string name", r.String())
		}
		if _, ok := getString(po, "codeVerifier"); !ok {
			return nil, Mismatch("every oauth2 provider to have a string codeVerifier", r.String())
		}
	}
	for _, name := range []string{"mfa", "otp"} {
		if _, present := m[name]; name == "otp" && !present && !c.strict() {
			continue
		}
		o, err := section(name)
		if err != nil {
			return nil, err
		}
		if _, err := boolAt(o, name, "enabled"); err != nil {
			return nil, err
		}
	}
	return out, nil
}
