//go:build !unix && !windows

package journal

func isNoSpace(error) bool { return false }
