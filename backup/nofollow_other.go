//go:build !unix

package backup

const noFollow = 0
