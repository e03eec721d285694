package pocketbase

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// pbServer is a real PocketBase v0.31.0 (STRONGBOX_POCKETBASE) serving a
// temp data dir on 127.0.0.1.
type pbServer struct {
	t     *testing.T
	bin   string
	dir   string
	env   []string // extra environment, with the matching flags in args
	args  []string // global flags (--encryptionEnv)
	url   string
	cmd   *exec.Cmd
	out   bytes.Buffer
	done  chan error
	token string // a superuser's token
}

const (
	pbAdmin    = "admin@example.com"
	pbAdminPwd = "admin-password-1"
)

// newPB returns a PocketBase for a new data dir, its superuser created
// (`superuser upsert`), not yet started; it skips t when
// STRONGBOX_POCKETBASE is unset.
func newPB(t *testing.T, env []string, args ...string) *pbServer {
	t.Helper()
	bin := os.Getenv("STRONGBOX_POCKETBASE")
	if bin == "" {
		t.Skip("STRONGBOX_POCKETBASE is not set: it names the PocketBase v0.31.0 binary this test runs")
	}
	s := &pbServer{t: t, bin: bin, dir: t.TempDir(), env: env, args: args}
	cmd := exec.Command(bin, append([]string{"superuser", "upsert", pbAdmin, pbAdminPwd, "--dir", s.dir}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pocketbase superuser upsert: %v\n%s", err, out)
	}
	return s
}

// start starts PocketBase on a free port, waits until it answers and
// signs the superuser in.
func (s *pbServer) start() {
	t := s.t
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s.url = "http://" + addr
	s.out.Reset()
	s.cmd = exec.Command(s.bin, append([]string{"serve", "--http", addr, "--dir", s.dir,
		"--publicDir", s.dir + "/pb_public", "--hooksDir", s.dir + "/pb_hooks"}, s.args...)...)
	s.cmd.Env = append(os.Environ(), s.env...)
	s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.done = make(chan error, 1)
	go func(cmd *exec.Cmd, done chan error) { done <- cmd.Wait() }(s.cmd, s.done)
	t.Cleanup(func() { s.signal(syscall.SIGKILL) })
	s.waitReady()
	var auth struct{ Token string }
	s.call("POST", "/api/collections/_superusers/auth-with-password", map[string]any{"identity": pbAdmin, "password": pbAdminPwd}, &auth)
	s.token = auth.Token
}

// waitReady polls /api/health until PocketBase answers, for at most 30s.
func (s *pbServer) waitReady() {
	s.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if resp, err := http.Get(s.url + "/api/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case err := <-s.done:
			s.done <- err
			s.t.Fatalf("pocketbase exited: %v\n%s", err, s.out.String())
		case <-deadline.C:
			s.t.Fatalf("pocketbase did not answer in 30s\n%s", s.out.String())
		case <-tick.C:
		}
	}
}

// signal sends sig to PocketBase, if it runs, and waits (30s at most)
// for it to exit.
func (s *pbServer) signal(sig os.Signal) {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Signal(sig)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
		s.t.Errorf("pocketbase did not stop in 30s on %v", sig)
	}
	s.cmd = nil
}

// stop stops PocketBase cleanly (SIGTERM), as a user would.
func (s *pbServer) stop() { s.signal(syscall.SIGTERM) }

// call makes a request as the superuser, body as JSON, and decodes the
// answer into out (when not nil); an answer above 299 fails the test.
func (s *pbServer) call(method, path string, body, out any) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, r)
	if err != nil {
		s.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if s.token != "" {
		req.Header.Set("Authorization", s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode > 299 {
		s.t.Fatalf("%s %s: %s\n%s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			s.t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
}

// createRecord creates a record of collection and returns its id.
func (s *pbServer) createRecord(collection string, fields map[string]any) string {
	s.t.Helper()
	var rec struct{ ID string }
	s.call("POST", fmt.Sprintf("/api/collections/%s/records", collection), fields, &rec)
	return rec.ID
}

// waitLogs polls the logs API until it lists n requests to /api/health,
// for at most 30s.
func (s *pbServer) waitLogs(n int) {
	s.t.Helper()
	deadline := time.NewTimer(30 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		var list struct{ TotalItems int }
		s.call("GET", "/api/logs?filter="+url.QueryEscape("data.url = '/api/health'"), nil, &list)
		if list.TotalItems >= n {
			return
		}
		select {
		case <-deadline.C:
			s.t.Fatalf("the logs API lists %d requests to /api/health after 30s, want %d", list.TotalItems, n)
		case <-tick.C:
		}
	}
}
