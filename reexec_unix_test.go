//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopDuring stops the process p (SIGSTOP), calls send, and lets p run
// again (SIGCONT) 300 ms later: what send started meanwhile must wait for
// it. It returns send's result.
func stopDuring(t *testing.T, p *os.Process, send func() <-chan healthProbe) <-chan healthProbe {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the server: %v", err)
	}
	defer func() {
		if err := p.Signal(syscall.SIGCONT); err != nil {
			t.Errorf("continue the server: %v", err)
		}
	}()
	c := send()
	out := make(chan healthProbe, 1)
	select {
	case r := <-c:
		if r.err != nil {
			t.Errorf("a request sent while the restarting server was stopped: %v; want it to wait in the socket's backlog", r.err)
		}
		out <- r
	case <-time.After(300 * time.Millisecond):
		go func() { out <- <-c }()
	}
	return out
}

// listenInode returns the inode of the socket listening on base's port,
// from /proc/net/tcp; "" where there is none (not Linux).
func listenInode(t *testing.T, base string) string {
	t.Helper()
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	port, err := strconv.Atoi(base[strings.LastIndexByte(base, ':')+1:])
	if err != nil {
		t.Fatalf("no port in %s", base)
	}
	suffix := fmt.Sprintf(":%04X", port)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
		fs := strings.Fields(sc.Text())
		if len(fs) > 9 && strings.HasSuffix(fs[1], suffix) && fs[3] == "0A" {
			return fs[9]
		}
	}
	t.Fatalf("no socket listens on %s in /proc/net/tcp", base)
	return ""
}

// inheritedFDs returns the descriptors of the process pid above 2 that
// are not close-on-exec, which an exec keeps, with what they are (Linux
// only, from /proc/PID/fdinfo; nil elsewhere or if they cannot be read).
// A Go program opens every descriptor close-on-exec, so these are the ones
// its parent left open for it.
func inheritedFDs(t *testing.T, pid int) map[int]string {
	t.Helper()
	if runtime.GOOS != "linux" {
		return nil
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	names, err := os.ReadDir(dir)
	if err != nil {
		t.Logf("cannot list the server's descriptors: %v", err)
		return nil
	}
	fds := map[int]string{}
	for _, e := range names {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			continue // closed meanwhile
		}
		for line := range strings.Lines(string(b)) {
			v, ok := strings.CutPrefix(line, "flags:")
			if !ok {
				continue
			}
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatalf("fdinfo of descriptor %d: %q", fd, line)
			}
			if flags&syscall.O_CLOEXEC == 0 {
				fds[fd], _ = os.Readlink(filepath.Join(dir, e.Name()))
			}
		}
	}
	return fds
}

// checkChildFDs checks that the process pid, re-executed by a restore,
// holds no descriptor that an exec keeps besides those it had before
// (before, from inheritedFDs; those its parent left open for it): the new
// image got no descriptor of the old one but the handed-over socket, and
// kept no copy of that one (it adopted a close-on-exec duplicate).
func checkChildFDs(t *testing.T, pid int, before map[int]string) {
	t.Helper()
	if before == nil {
		return
	}
	for fd, what := range inheritedFDs(t, pid) {
		if _, ok := before[fd]; !ok {
			t.Errorf("descriptor %d (%s) of the restarted server is not close-on-exec: leaked from the old image, or kept", fd, what)
		}
	}
}
