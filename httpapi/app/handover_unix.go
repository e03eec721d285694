//go:build unix

package app

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
)

// adopt returns the TCP listener on the inherited descriptor fd, meant for
// the process pid (the values of envListenFD and envListenPID). The
// descriptor is closed once the listener holds a duplicate of it, also when
// it turns out to be no TCP listener: it was inherited for this process
// and nobody else uses it. A descriptor that was not inherited is left
// alone.
func adopt(fdVar, pidVar string) (*net.TCPListener, error) {
	if pid, err := strconv.Atoi(pidVar); err != nil || pid != os.Getpid() {
		return nil, fmt.Errorf("app: %s=%q: meant for another process than this one (%d)", envListenPID, pidVar, os.Getpid())
	}
	fd, err := strconv.Atoi(fdVar)
	if err != nil || fd <= 2 {
		return nil, fmt.Errorf("app: %s=%q: not a descriptor number above 2", envListenFD, fdVar)
	}
	flags, err := fcntl(uintptr(fd), syscall.F_GETFD, 0)
	if err != nil {
		return nil, fmt.Errorf("app: descriptor %d: %w", fd, err)
	}
	if flags&syscall.FD_CLOEXEC != 0 {
		// Go opens every descriptor close-on-exec: this one was opened by
		// this image, not inherited.
		return nil, fmt.Errorf("app: descriptor %d is close-on-exec: it was not inherited", fd)
	}
	f := os.NewFile(uintptr(fd), "inherited listener")
	defer f.Close()
	ln, err := net.FileListener(f)
	if err != nil {
		return nil, fmt.Errorf("app: descriptor %d: %w", fd, err)
	}
	tcp, ok := ln.(*net.TCPListener)
	if !ok {
		ln.Close()
		return nil, fmt.Errorf("app: descriptor %d is a %s socket, not TCP", fd, ln.Addr().Network())
	}
	if err := listening(tcp); err != nil {
		tcp.Close()
		return nil, fmt.Errorf("app: descriptor %d: %w", fd, err)
	}
	return tcp, nil
}

// listening reports an error unless ln's socket listens (SO_ACCEPTCONN):
// a connected socket would pass for a listener until Accept failed.
func listening(ln *net.TCPListener) error {
	rc, err := ln.SyscallConn()
	if err != nil {
		return err
	}
	var v int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		v, serr = syscall.GetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_ACCEPTCONN)
	}); err != nil {
		return err
	}
	if serr != nil {
		return os.NewSyscallError("getsockopt", serr)
	}
	if v == 0 {
		return errors.New("the socket does not listen")
	}
	return nil
}

// keepListener returns a duplicate of ln's descriptor, close-on-exec like
// every descriptor Go creates (the net package dups with F_DUPFD_CLOEXEC),
// which keeps the socket listening once the http.Server has closed ln.
// It is a bare number, owned by no *os.File: an *os.File would close it
// when collected, and could switch the socket, which ln still serves on,
// to blocking mode (File.Fd does).
func keepListener(ln net.Listener) (int, error) {
	tcp, ok := ln.(*net.TCPListener)
	if !ok {
		return -1, fmt.Errorf("app: a %T cannot be handed over", ln)
	}
	rc, err := tcp.SyscallConn()
	if err != nil {
		return -1, err
	}
	nfd := -1
	var derr error
	if err := rc.Control(func(fd uintptr) {
		var n int
		n, derr = fcntl(fd, syscall.F_DUPFD_CLOEXEC, 3)
		nfd = n
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, fmt.Errorf("app: dup the listener: %w", derr)
	}
	return nfd, nil
}

// setInherit clears (inherit) or sets FD_CLOEXEC on fd.
func setInherit(fd int, inherit bool) error {
	flag := syscall.FD_CLOEXEC
	if inherit {
		flag = 0
	}
	if _, err := fcntl(uintptr(fd), syscall.F_SETFD, flag); err != nil {
		return fmt.Errorf("app: fcntl F_SETFD on descriptor %d: %w", fd, err)
	}
	return nil
}

// listenerOf returns a listener on the kept descriptor fd, which it
// closes (the listener holds a duplicate): a failed exec serves on again.
func listenerOf(fd int) (net.Listener, error) {
	if err := setInherit(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "kept listener")
	defer f.Close()
	return net.FileListener(f)
}

// closeKept closes the kept descriptor fd.
func closeKept(fd int) { syscall.Close(fd) }

func fcntl(fd uintptr, cmd, arg int) (int, error) {
	r, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, uintptr(cmd), uintptr(arg))
	if errno != 0 {
		return -1, errno
	}
	return int(r), nil
}
