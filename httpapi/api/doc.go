// Package api is strongbox's HTTP JSON API: the routes of the interface
// document, the PocketBase error envelope and status codes, token loading,
// request logging and the `fields` projection. Lower packages know nothing
// of HTTP; this one translates between them and the wire.
package api
