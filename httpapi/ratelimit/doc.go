// Package ratelimit holds strongbox's request limiters, free of HTTP so
// that tests drive them with a fake clock. There are two:
//
//   - [Limiter] enforces PocketBase's rateLimits rules (v0.31
//     settings: label, audience, maxRequests, duration), matched by
//     [Find] in PocketBase's label priority, one fixed window per rule
//     bucket and client;
//   - [Guard] is strongbox's own password-login throttle, on by default,
//     which counts failed logins per identity and client, and has logins
//     beyond the places the failures leave wait their turn (see Policy).
//
// Both keep their state in memory, in tables bounded to a fixed number of
// keys that evict the least recently used one when full; a restart
// forgets it. Clients are keyed by [ClientKey]: an IPv4 address, or an
// IPv6 address by its /64 (PocketBase counts each address). Package
// strongbox/httpapi/api renders their refusals (429, with Retry-After).
//
// # The login throttle
//
// Password login is throttled whatever the settings say (PocketBase
// v0.31.0 has no lockout). Only failed attempts count (a wrong password or
// an unknown identity), each counter in a 15-minute window opened by its
// first failure ([DefaultPolicy]):
//
//	counter                                              limit         past it
//	identity (collection + lowercased identity), client  5             that identity is locked at that client
//	one client, all identities                           50            that client is locked for every identity that has not logged in from it within 30 days
//	identity from all clients                            10, then 100  past 10, its checks from clients where it has not logged in within 30 days start at most one a second; past 100 (NIST SP 800-63B's ceiling), it is locked there
//
// The right password is never refused because others guessed wrong from
// elsewhere, nor because other logins are in progress: a login in progress
// holds a place in each counter until it ends, a counter has as many
// places as failures it has left, and a login beyond them waits its turn
// (first come first served) instead of failing, so however many wrong
// passwords arrive at once, at most 5 per identity and client are checked
// in a window. A locked attempt is refused before any bcrypt work, so even
// the right password is refused there; one whose turn does not come
// within 5 seconds (or whose client goes away) is refused as a rate limit.
// A successful login clears the failures of its identity at its client,
// and exempts that pair from the last two counters for 30 days. At most
// 50,000 counters and 50,000 known logins are kept (about 15 MB), the
// least recently used evicted first.
//
// # Rate-limit rules
//
// The settings' rateLimits are PocketBase's: enabled (false by default)
// and rules of {label, audience, duration, maxRequests} (defaults *:auth
// 2/3 s, *:create 20/5 s, /api/batch 3/1 s, /api/ 300/10 s). When enabled,
// a request's labels are tried in order ([CollectionLabels]:
// <collection>:<tag>, then *:<tag> for the tags of collection routes, then
// [PathLabels]: <METHOD> <path>, <path>), for each label a rule with
// exactly that label first, then rules ending in "/" as path prefixes; the
// first rule whose audience ("", @guest, @auth) fits applies, and a client
// over its maxRequests in a fixed duration-second window is refused. A
// change of the rules applies at once, with fresh counters; at most
// [DefaultMaxWindows] (rule, client) windows are kept.
package ratelimit
