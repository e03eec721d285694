//go:build !unix

package app

// canHandOver: a restore hands its listening socket to the new image.
const canHandOver = false

func inheritable(fd int) bool { return false }

func inheritableFDs() map[int]bool { return nil }
