// Package oauth2 talks to OAuth2 and OpenID Connect providers for record
// sign-in (interface §4.5, §5 rule 11): the built-in provider presets
// (their endpoints, scopes and user-info mapping), the authorization URL
// with PKCE, the code exchange, the user-info fetch and the validation of
// an OpenID Connect id_token. Every outbound call is bounded in time and
// size, refuses redirects to other hosts and, unless the Client allows
// them, connections to loopback, link-local and private addresses
// (ErrPrivateAddress).
//
// The pieces, in the order a sign-in uses them:
//   - collection save: package authn checks a collection's
//     oauth2.providers (names, duplicates, credentials, URLs); this
//     package takes no part in it;
//   - auth-methods: Resolve fills the preset's defaults, NewState and
//     NewPKCE make the fresh values, AuthURL the URL ending in
//     `&redirect_uri=`;
//   - auth-with-oauth2: Client.Exchange (the Exchanger) returns the User,
//     or an error wrapping ErrProvider, ErrToken or ErrUser.
//
// It knows nothing of HTTP routes or of the stores: httpapi/api resolves the
// record a User signs in as, and authn stores the links. Tests run against
// the loopback provider of package strongbox/conformance/oauth2provider.
package oauth2
