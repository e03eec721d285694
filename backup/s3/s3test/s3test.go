// Package s3test starts a real S3 server for tests: versitygw (an S3
// gateway written in Go) over a posix directory, on 127.0.0.1, when the
// environment variable STRONGBOX_S3_GATEWAY names its binary. .ci/run
// installs versitygw v1.8.0 and sets the variable; without it the tests
// that need a server skip, so `go test ./...` needs only Go.
package s3test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// EnvGateway names the environment variable that holds the path of the
// versitygw binary.
const EnvGateway = "STRONGBOX_S3_GATEWAY"

// Gateway is a running S3 server with one empty bucket.
type Gateway struct {
	Endpoint  string // "http://127.0.0.1:PORT"; address it path-style
	Region    string
	Bucket    string
	AccessKey string
	Secret    string
	// Dir is the gateway's root folder: the bucket is the folder
	// Dir/Bucket and each object a file under it.
	Dir string
}

// Start starts versitygw on a free port of 127.0.0.1 over a fresh
// t.TempDir() holding one bucket, waits until it answers, and stops it when
// the test ends. It skips t, with the reason, when STRONGBOX_S3_GATEWAY is
// unset.
func Start(t testing.TB) Gateway {
	t.Helper()
	bin := os.Getenv(EnvGateway)
	if bin == "" {
		t.Skip(EnvGateway + " is unset (the path of a versitygw v1.8.0 binary, which .ci/run installs): no S3 server to test against")
	}
	g := Gateway{Region: "us-east-1", Bucket: "strongbox-test", AccessKey: "AK" + randomHex(t, 8),
		Secret: randomHex(t, 20), Dir: t.TempDir()}
	if err := os.Mkdir(filepath.Join(g.Dir, g.Bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	// A port picked here may be taken by another process before the
	// gateway binds it: try a few.
	var lastErr error
	for try := 0; try < 3; try++ {
		addr, err := freeAddr()
		if err != nil {
			t.Fatal(err)
		}
		if lastErr = g.run(t, bin, addr); lastErr == nil {
			g.Endpoint = "http://" + addr
			return g
		}
	}
	t.Fatalf("s3test: versitygw did not start: %v", lastErr)
	return g
}

// run starts the gateway on addr and waits for it to answer.
func (g Gateway) run(t testing.TB, bin, addr string) error {
	var out strings.Builder
	cmd := exec.Command(bin, "--port", addr, "--region", g.Region, "--quiet", "posix", g.Dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+g.AccessKey, "ROOT_SECRET_KEY="+g.Secret)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	probe := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("exited (%v): %s", err, out.String())
		case <-deadline:
			stop()
			return fmt.Errorf("no answer on %s within 30 s: %s", addr, out.String())
		case <-tick.C:
		}
		// Any HTTP answer (an unsigned request is refused) means it serves.
		resp, err := probe.Get("http://" + addr + "/")
		if err == nil {
			resp.Body.Close()
			t.Cleanup(stop)
			return nil
		}
	}
}

// Files returns the paths, relative to the bucket's folder and with
// slashes, of the regular files the bucket's folder holds: its objects and
// the gateway's hidden state under it (the parts of pending multipart
// uploads), sorted.
func (g Gateway) Files(t testing.TB) []string {
	t.Helper()
	root := filepath.Join(g.Dir, g.Bucket)
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(root, path)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
