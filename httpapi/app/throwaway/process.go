package throwaway

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadyLine is the line `strongbox serve` prints on stdout once it
// serves: a parent process learns from it that the server serves, and
// where (see ParseReadyLine). Each start prints it, the re-exec of a
// restore included.
func ReadyLine(version, base, dir string) string {
	return fmt.Sprintf("strongbox %s listening on %s (data dir %s)", version, base, dir)
}

// ParseReadyLine returns the base URL in a ReadyLine, and whether line is
// one.
func ParseReadyLine(line string) (base string, ok bool) {
	head, rest, ok := strings.Cut(line, " listening on ")
	if !ok || !strings.HasPrefix(head, "strongbox ") || !strings.HasPrefix(rest, "http://") {
		return "", false
	}
	return strings.Fields(rest)[0], true
}

// Process is `strongbox serve` running as a child process.
type Process struct {
	Cmd  *exec.Cmd
	Base string // the base URL its first start printed
	// Starts receives the base URL of each later start: a restore
	// re-executes the process, which prints its ready line again.
	Starts chan string
	Done   chan struct{} // closed once the process has exited
	Err    error         // Wait's result, set before Done is closed
}

// StartProcess runs `exe serve --http addr --dir dir` with env added to
// this process's environment and its log sent to stderr, and returns once
// it serves: when it prints its ReadyLine on stdout (the rest of stdout is
// discarded). It fails if the process exits first, with the end of its
// log, or when ctx ends, and then leaves no process behind.
func StartProcess(ctx context.Context, exe, addr, dir string, env []string, stderr io.Writer) (*Process, error) {
	c := &Process{Starts: make(chan string, 16), Done: make(chan struct{})}
	first := make(chan string, 1)
	seen := false // lineWriter calls line from one goroutine at a time
	tail := &tailWriter{}
	c.Cmd = exec.Command(exe, "serve", "--http", addr, "--dir", dir)
	c.Cmd.Env = append(os.Environ(), env...)
	c.Cmd.Stderr = io.MultiWriter(stderr, tail)
	c.Cmd.Stdout = &lineWriter{line: func(line string) {
		base, ok := ParseReadyLine(line)
		switch {
		case !ok:
		case !seen:
			seen = true
			first <- base
		default:
			select {
			case c.Starts <- base:
			default: // nobody follows the restarts this far
			}
		}
	}}
	if err := c.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.Err = c.Cmd.Wait()
		close(c.Done)
	}()
	select {
	case c.Base = <-first:
		return c, nil
	case <-c.Done:
		return nil, fmt.Errorf("serve exited before it was ready: %v: %s", c.Err, tail.last())
	case <-ctx.Done():
		c.Stop()
		return nil, fmt.Errorf("serve did not get ready: %w", context.Cause(ctx))
	}
}

// Stop asks the child to stop gracefully (SIGTERM; on Windows, which has
// no signals, it kills it), kills it if it has not exited 10 s later, and
// returns its exit error.
func (c *Process) Stop() error {
	if err := c.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		c.Cmd.Process.Kill()
	}
	select {
	case <-c.Done:
	case <-time.After(10 * time.Second):
		c.Cmd.Process.Kill()
		<-c.Done
		return fmt.Errorf("serve (pid %d) did not stop within 10 s of SIGTERM: killed", c.Cmd.Process.Pid)
	}
	return c.Err
}

// lineWriter calls line with each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		w.line(string(w.buf[:i]))
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 64<<10 { // no line is that long: drop it
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct {
	mu sync.Mutex
	b  []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b = append(w.b, p...)
	if n := len(w.b) - 4<<10; n > 0 {
		w.b = w.b[n:]
	}
	return len(p), nil
}

// last returns the last non-empty line written.
func (w *tailWriter) last() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := strings.TrimSpace(string(w.b))
	return s[strings.LastIndexByte(s, '\n')+1:]
}
