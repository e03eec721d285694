// Package oauth2 talks to OAuth2 and OpenID Connect providers for record
// sign-in (interface §4.5, §5 rule 11): the built-in provider presets
// (their endpoints, scopes and user-info mapping), the authorization URL
// with PKCE, the code exchange, the user-info fetch and the validation of
// an OpenID Connect id_token. Every outbound call is bounded in time and
// size and refuses redirects to other hosts.
//
// It knows nothing of HTTP routes or of the stores: httpapi resolves the
// record a User signs in as, and authn stores the links.
package oauth2
