// Package validation is the vocabulary of input validation shared by every
// store: the failure of one input field (Error: code, message, params), the
// failures of one input, nested like the input (Errors), every
// validation code strongbox answers with (codes.go), and the formats more
// than one input shares, each checked in one place (formats.go).
//
// A store validates its input and returns an Errors; package httpapi/api
// renders it, in one place, as the data of the 400 error envelope:
//
//	{"email": {"code": "validation_required", "message": "Cannot be blank."},
//	 "oauth2": {"enabled": {"code": "…", "message": "…"}}}
//
// The package knows nothing of HTTP and imports nothing else of the project,
// so any package may use it (deps_test.go).
package validation
