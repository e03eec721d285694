// Package throwaway starts a strongbox server for one run of the
// conformance suite: on a temporary data dir and a free loopback port,
// with a superuser of its own, removed when it stops. It serves inside
// this process, or as a child process running `strongbox serve`
// (Process, which the tests use too) when the run restores a backup,
// which re-executes the server.
package throwaway

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
)

// Email is the superuser of a throwaway server; its password is generated
// for each one.
const Email = "conformance@localhost"

// ErrNoExec is why a server started inside another command (by a test,
// or by `strongbox conformance` in its own process) cannot restore a
// backup: restarting it by exec would replace the process it runs in.
var ErrNoExec = errors.New("Restoring a backup needs a server started by `strongbox serve`: this one runs inside another command, which restarting it would replace.")

// Server is a running throwaway server.
type Server struct {
	Base     string // its base URL
	Password string // the password of Email
	stop     func()
}

// Stop stops the server and removes its data dir.
func (s *Server) Stop() { s.stop() }

// ServeFunc runs the serve command in this process with these arguments
// and environment until ctx ends, and calls ready with the server's base
// URL once it serves.
type ServeFunc func(ctx context.Context, args []string, getenv func(string) string, ready func(base string)) error

// env is the environment of a throwaway server: its first superuser, a
// cheap bcrypt cost unless the user set one in getenv, and OAuth2
// provider URLs allowed on private addresses, the suite's provider being
// on this host (127.0.0.1, or the --oauth2-host address).
func env(getenv func(string) string, password string) map[string]string {
	cost := getenv("STRONGBOX_BCRYPT_COST")
	if cost == "" {
		cost = "4"
	}
	return map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL":      Email,
		"STRONGBOX_SUPERUSER_PASSWORD":   password,
		"STRONGBOX_BCRYPT_COST":          cost,
		"STRONGBOX_OAUTH2_ALLOW_PRIVATE": "1",
	}
}

// InProcess serves a throwaway server inside this process with serve, on
// a free loopback port. Such a server refuses a restore (ErrNoExec).
func InProcess(ctx context.Context, getenv func(string) string, serve ServeFunc) (*Server, error) {
	dir, err := os.MkdirTemp("", "strongbox-conformance-")
	if err != nil {
		return nil, err
	}
	password := rand.Text()
	vars := env(getenv, password)
	ctx, cancel := context.WithCancel(ctx)
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, []string{"--http", "127.0.0.1:0", "--dir", dir},
			func(k string) string { return vars[k] }, func(base string) { addr <- base })
	}()
	select {
	case base := <-addr:
		return &Server{Base: base, Password: password, stop: func() {
			cancel()
			<-done
			os.RemoveAll(dir)
		}}, nil
	case err := <-done:
		os.RemoveAll(dir)
		cancel()
		return nil, fmt.Errorf("start throwaway server: %v", err)
	}
}

// Child serves a throwaway server as a child process, this executable
// running `serve` on a free loopback port, so that a restore can
// re-execute it (the re-executed image keeps the socket, so the port
// stays). Its superuser's password reaches it through the environment,
// never the command line; its log goes to stderr.
func Child(ctx context.Context, getenv func(string) string, stderr io.Writer) (*Server, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start throwaway server: %w", err)
	}
	dir, err := os.MkdirTemp("", "strongbox-conformance-")
	if err != nil {
		return nil, err
	}
	password := rand.Text()
	var vars []string
	for k, v := range env(getenv, password) {
		vars = append(vars, k+"="+v)
	}
	c, err := StartProcess(ctx, exe, "127.0.0.1:0", dir, vars, stderr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start throwaway server: %w", err)
	}
	return &Server{Base: c.Base, Password: password, stop: func() {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(stderr, "strongbox: throwaway server: %v\n", err)
		}
		os.RemoveAll(dir)
	}}, nil
}
