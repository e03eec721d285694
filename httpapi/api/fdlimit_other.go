//go:build !unix

package api

// fileLimit is unknown outside Unix: the connection cap is its default.
func fileLimit() int { return 0 }
