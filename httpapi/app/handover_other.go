//go:build !unix

package app

import (
	"errors"
	"net"
)

// errNoHandover: only Unix passes descriptors across an exec, and only
// Unix restores by exec (see canRestore).
var errNoHandover = errors.New("app: handing a socket over needs Unix")

func adopt(fdVar, pidVar string) (*net.TCPListener, error) { return nil, errNoHandover }

func keepListener(ln net.Listener) (int, error) { return -1, errNoHandover }

func setInherit(fd int, inherit bool) error { return errNoHandover }

func listenerOf(fd int) (net.Listener, error) { return nil, errNoHandover }

func closeKept(fd int) {}
