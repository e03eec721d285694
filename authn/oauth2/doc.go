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
// It knows nothing of HTTP routes or of the stores: package httpapi/api hands the User
// to package authn, which resolves the record it signs in as and stores
// the link (authn.Store.SignInOAuth2). The server holds one Client per
// process (api.Config.OAuth2). Tests run against the loopback provider
// of package strongbox/conformance/oauth2provider: an authorization
// endpoint that checks client_id, redirect_uri and the PKCE challenge and
// sends the browser back with a code or, as told, an error such as
// access_denied; PKCE enforced at the token endpoint, a JWKS with a key
// generated in the process, signed id_tokens, and on demand a 500, a hang,
// malformed JSON, a huge body or a redirect to another host.
//
// # Presets
//
// Every name PocketBase v0.31 registers has a preset (Names() equals
// authn.ProviderNames): PocketBase's endpoints, scopes, PKCE default,
// display name and mapping of the user JSON to id, name, username,
// avatarURL and the email, with what a provider needs beyond a GET with
// the Bearer token (headers, a GraphQL POST, an emails API, a field of the
// token answer). mailcow and oidc* have no endpoints of their own:
// authURL, tokenURL (and userInfoURL) must be set. PKCE is on by default
// except for bitbucket, linear and vk; the collection's pkce overrides it.
// A provider's authURL, tokenURL, userInfoURL and displayName, when set,
// replace the preset's. apple and oidc* without a userInfoURL read the
// user from the verified id_token; apple's client secret is the JWT you
// generate, sent as is. An account the provider reports inactive is
// refused, as PocketBase refuses it.
//
// An email is trusted (it may match a record, and is stored and reported)
// only when the provider says it is verified: a flag in its answer, the
// primary verified address of its emails API, or an address the provider
// only ever gives verified (GitHub's profile email, GitLab's, Twitch's,
// X's confirmed_email, mailcow's own mailbox). Where PocketBase trusts an
// address without such a word (box, facebook, linear, notion, vk, yandex,
// the profile emails of gitea and gitee, an unconfirmed primary address of
// bitbucket), strongbox does not; microsoft's mail is never trusted. The
// record side must not match or link an account by an unverified email
// (RFC 9700, pre-account takeover).
//
// OIDC extra keys (PocketBase's): jwksURL, the JWKS that signs the
// id_token; issuers, the accepted iss values. Without a userInfoURL the
// id_token must be verifiable: jwksURL, or else issuers, whose first
// issuer's /.well-known/openid-configuration names the JWKS (its issuer
// must match exactly). PocketBase checks the signature only when jwksURL
// is set; strongbox refuses an id_token it cannot verify.
//
// # Security
//
//   - state is 30 and the PKCE verifier 43 crypto-random alphanumerics;
//     the challenge is S256 (RFC 7636 §4.2). The authorization URL ends
//     with &redirect_uri= for the client to complete.
//   - id_token: RS256 only, whatever the header says (no none, no HS256
//     with the public key); RSA keys of 2048 bits or more; aud must name
//     the client id (and azp it when aud lists several); iss one of
//     issuers; exp and iat with 5 minutes of skew (PocketBase's); keys
//     cached 10 minutes and refetched at once for an unknown kid.
//   - Every exchange (token, user, keys) is bounded by 30 s in all; every
//     answer by 1 MiB; redirects only to the same scheme and host (at
//     most 3), so a Bearer token or a code never follows a redirect
//     elsewhere; only http(s) URLs are fetched.
//   - The client authenticates with HTTP Basic and, if the token endpoint
//     refuses the client (401 or invalid_client), in the body, remembering
//     what worked. A refused code is not retried: codes are single-use.
//   - Errors carry the provider's error and error_description (cleaned,
//     at most 200 characters), never the secret, the code or a token.
//   - Provider URLs are a superuser's input, and strongbox treats them as
//     untrusted (PocketBase v0.31.0 does not): no provider request
//     connects to a loopback, unspecified, link-local (the cloud metadata
//     address 169.254.169.254 among them), private (10/8, 172.16/12,
//     192.168/16, fc00::/7) or shared CGNAT (100.64/10) address, nor their
//     IPv4-mapped IPv6 forms. The check runs on the address each
//     connection is made to, after DNS, so a name that resolves to such an
//     address is refused too, also when its answer changes between
//     requests, and so are redirects and the id_token keys and discovery.
//     For a provider on your own network, start the server with
//     STRONGBOX_OAUTH2_ALLOW_PRIVATE=1. A proxy from the environment
//     (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) is used as before and may be on
//     a private address itself; through it the provider's host is checked
//     as this host resolves it, and the proxy resolves it again, so to be
//     firm apply the same rule in the proxy.
//
// # Measured
//
// go test ./authn/oauth2 -run - -bench Exchange -benchtime 2s (2 vCPU, the
// loopback provider): token and user-info exchange (google preset) about
// 6,300/s serially (p50 0.10 ms, p99 0.9 ms) and 7,600/s in parallel, the
// provider's handlers taking 8–12 µs per request; with a signed id_token
// verified against the cached JWKS (oidc) about 800/s serially and 1,200/s
// in parallel, where the provider's RS256 signing takes about 1.1 ms of
// each exchange. Each preset against its provider's API shape on loopback
// (go test ./authn/oauth2 -run '^$' -bench PresetExchange -benchtime 200x;
// TestPresetExchange checks the same exchanges): 0.12–0.31 ms per
// exchange, 1.6–3.0 ms for the id_token presets (the provider's signing).
package oauth2
