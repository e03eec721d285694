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
// keys that evict the least recently used one when full.
package ratelimit
