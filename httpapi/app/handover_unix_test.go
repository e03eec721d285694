//go:build unix

package app

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// canHandOver: a restore hands its listening socket to the new image.
const canHandOver = true

// inheritable reports whether fd is open and not close-on-exec: an exec
// would keep it.
func inheritable(fd int) bool {
	flags, err := fcntl(uintptr(fd), syscall.F_GETFD, 0)
	return err == nil && flags&syscall.FD_CLOEXEC == 0
}

// inheritableFDs lists the descriptors an exec would keep, from
// /proc/self/fd; nil where it cannot list them (not Linux).
func inheritableFDs() map[int]bool {
	if runtime.GOOS != "linux" {
		return nil
	}
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil
	}
	fds := map[int]bool{}
	for _, name := range names {
		if fd, err := strconv.Atoi(name); err == nil && inheritable(fd) {
			fds[fd] = true
		}
	}
	return fds
}

// inheritableDup returns a duplicate of fd that an exec would keep, closed
// when the test ends unless taken (set to -1).
func inheritableDup(t *testing.T, fd uintptr) *int {
	t.Helper()
	n, err := syscall.Dup(int(fd)) // dup(2) never sets FD_CLOEXEC
	if err != nil {
		t.Fatal(err)
	}
	p := &n
	t.Cleanup(func() {
		if *p >= 0 {
			syscall.Close(*p)
		}
	})
	return p
}

// TestAdoptListener: the listening socket handed over by the environment
// is adopted only if it is meant for this PID, inherited (not
// close-on-exec) and a listening TCP socket; otherwise it is ignored with
// a warning, closed if it was inherited for this process, and left alone
// if not. The variables leave the environment either way.
func TestAdoptListener(t *testing.T) {
	pid := strconv.Itoa(os.Getpid())
	listener := func(t *testing.T) *net.TCPListener {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		return ln.(*net.TCPListener)
	}
	rawFD := func(t *testing.T, sc syscall.Conn) uintptr {
		rc, err := sc.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var n uintptr
		rc.Control(func(fd uintptr) { n = fd })
		return n
	}
	for _, tt := range []struct {
		name string
		// fd returns the descriptor to hand over, and whether adopt may
		// close it (it was inherited for this process).
		fd       func(t *testing.T) (fd string, owned *int)
		pid      string
		adopted  bool
		wantWarn string
	}{
		{"absent", nil, "", false, ""},
		{"a listening TCP socket", func(t *testing.T) (string, *int) {
			p := inheritableDup(t, rawFD(t, listener(t)))
			return strconv.Itoa(*p), p
		}, pid, true, ""},
		{"meant for another process", func(t *testing.T) (string, *int) {
			p := inheritableDup(t, rawFD(t, listener(t)))
			return strconv.Itoa(*p), nil
		}, "1", false, "meant for another process"},
		{"not a number", func(t *testing.T) (string, *int) { return "three", nil }, pid, false, "not a descriptor number"},
		{"stdout", func(t *testing.T) (string, *int) { return "1", nil }, pid, false, "not a descriptor number above 2"},
		{"not open", func(t *testing.T) (string, *int) { return "100000", nil }, pid, false, "bad file descriptor"},
		{"close-on-exec: not inherited", func(t *testing.T) (string, *int) {
			return strconv.Itoa(int(rawFD(t, listener(t)))), nil
		}, pid, false, "close-on-exec"},
		{"a file", func(t *testing.T) (string, *int) {
			f, err := os.Open(os.Args[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			p := inheritableDup(t, f.Fd())
			return strconv.Itoa(*p), p
		}, pid, false, "descriptor"},
		{"a UDP socket", func(t *testing.T) (string, *int) {
			c, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			p := inheritableDup(t, rawFD(t, c.(*net.UDPConn)))
			return strconv.Itoa(*p), p
		}, pid, false, "descriptor"},
		{"a connected TCP socket", func(t *testing.T) (string, *int) {
			ln := listener(t)
			c, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			p := inheritableDup(t, rawFD(t, c.(*net.TCPConn)))
			return strconv.Itoa(*p), p
		}, pid, false, "does not listen"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log logBuffer
			fd, owned := "", (*int)(nil)
			if tt.fd != nil {
				fd, owned = tt.fd(t)
				t.Setenv(envListenFD, fd)
				t.Setenv(envListenPID, tt.pid)
			}
			ln := adoptListener(log.logger())
			if got := ln != nil; got != tt.adopted {
				t.Fatalf("adoptListener(%s=%s, %s=%s) = %v, want adopted %v; log:\n%s", envListenFD, fd, envListenPID, tt.pid, ln, tt.adopted, log.String())
			}
			for _, k := range []string{envListenFD, envListenPID} {
				if v, ok := os.LookupEnv(k); ok {
					t.Errorf("%s=%s left in the environment", k, v)
				}
			}
			if tt.wantWarn == "" && strings.Contains(log.String(), "level=WARN") || !strings.Contains(log.String(), tt.wantWarn) {
				t.Errorf("log = %q, want a warning with %q", log.String(), tt.wantWarn)
			}
			n, _ := strconv.Atoi(fd)
			switch {
			case owned != nil:
				if inheritable(*owned) {
					t.Errorf("the inherited descriptor %d is still open", *owned)
				}
				*owned = -1 // closed by adopt: the test must not close its number again
			case tt.fd != nil && n > 2 && n < 100000:
				if _, err := fcntl(uintptr(n), syscall.F_GETFD, 0); err != nil {
					t.Errorf("descriptor %d, not this process's to take, was closed: %v", n, err)
				}
			}
			if ln == nil {
				return
			}
			defer ln.Close()
			if _, ok := ln.(*net.TCPListener); !ok {
				t.Errorf("adopted a %T, want a *net.TCPListener", ln)
			}
			// It serves: a connection is accepted.
			go func() {
				if c, err := net.Dial("tcp", ln.Addr().String()); err == nil {
					c.Close()
				}
			}()
			c, err := ln.Accept()
			if err != nil {
				t.Fatalf("Accept on the adopted listener: %v", err)
			}
			c.Close()
		})
	}
}
