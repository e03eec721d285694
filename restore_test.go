package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"strongbox/backup"
	"strongbox/httpapi/app"
)

// TestRestoreReexec restores a backup through the API of a real strongbox
// process: the process re-executes itself (same PID), takes the data dir's
// lock again, serves the restored data, and deletes the old data.
func TestRestoreReexec(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("restore through the API needs exec, which Windows lacks")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	child, dir, stderr := startChildServer(t, ctx,
		"STRONGBOX_SUPERUSER_EMAIL=root@example.com", "STRONGBOX_SUPERUSER_PASSWORD=root-password")
	base := child.Base
	pid := child.Cmd.Process.Pid

	client := &http.Client{Timeout: 30 * time.Second}
	call := func(method, url, token, body string) (int, []byte) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if token != "" {
			req.Header.Set("Authorization", token)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}
	signUp := func(base, email string) {
		t.Helper()
		body := fmt.Sprintf(`{"email":%q,"password":"password123","passwordConfirm":"password123"}`, email)
		if code, b := call("POST", base+"/api/collections/users/records", "", body); code != 200 {
			t.Fatalf("sign up %s: %d %s", email, code, b)
		}
	}
	users := func(base string) []string {
		t.Helper()
		code, b := call("POST", base+"/api/collections/_superusers/auth-with-password", "", `{"identity":"root@example.com","password":"root-password"}`)
		if code != 200 {
			t.Fatalf("login: %d %s", code, b)
		}
		var auth struct{ Token string }
		json.Unmarshal(b, &auth)
		code, b = call("GET", base+"/api/collections/users/records?perPage=100", auth.Token, "")
		if code != 200 {
			t.Fatalf("list users: %d %s", code, b)
		}
		var list struct{ Items []struct{ Email string } }
		if err := json.Unmarshal(b, &list); err != nil {
			t.Fatal(err)
		}
		var emails []string
		for _, it := range list.Items {
			emails = append(emails, it.Email)
		}
		slices.Sort(emails)
		return emails
	}

	signUp(base, "first@example.com")
	archiveLive(t, dir, "before.zip")
	signUp(base, "second@example.com")
	if got := users(base); !slices.Equal(got, []string{"first@example.com", "second@example.com"}) {
		t.Fatalf("users before the restore = %q", got)
	}

	code, b := call("POST", base+"/api/collections/_superusers/auth-with-password", "", `{"identity":"root@example.com","password":"root-password"}`)
	if code != 200 {
		t.Fatalf("login: %d %s", code, b)
	}
	var auth struct{ Token string }
	json.Unmarshal(b, &auth)
	inode := listenInode(t, base)
	fds := inheritedFDs(t, pid)
	if code, b := call("POST", base+"/api/backups/before.zip/restore", auth.Token, ""); code != 204 {
		t.Fatalf("restore: %d %s", code, b)
	}

	// Requests sent during the restart are answered (the 503 envelope
	// until the old image stops, then 200 once the new one serves), never
	// refused: a prober sends one after the other, each on a new
	// connection, until the new image serves.
	restarted := make(chan struct{})
	probes := make(chan []healthProbe, 1)
	go func() {
		var rs []healthProbe
		for {
			select {
			case <-restarted:
				probes <- append(rs, probeHealth(ctx, base))
				return
			default:
				rs = append(rs, probeHealth(ctx, base))
			}
		}
	}()
	// And one request sent, deterministically, inside the window: once
	// the old image has closed its http.Server and is about to exec, the
	// process is stopped (SIGSTOP), before or after the exec; a request
	// sent then waits in the socket's backlog, and gets its answer once
	// the process runs again.
	for !strings.Contains(stderr.String(), "restore: restarting the process") {
		select {
		case <-ctx.Done():
			t.Fatal("the restore never reached the exec")
		case <-time.After(time.Millisecond):
		}
	}
	inWindow := stopDuring(t, child.Cmd.Process, func() <-chan healthProbe {
		c := make(chan healthProbe, 1)
		go func() { c <- probeHealth(ctx, base) }()
		return c
	})

	// The process re-executes: it prints its address again, the same (the
	// socket was handed over, though the command line asks for port 0),
	// and never exits. The new image's lock file names the PID that holds
	// it: the same as before, and the child never exited, so no other
	// process took over.
	var base2 string
	select {
	case base2 = <-child.Starts:
	case <-child.Done:
		t.Fatalf("the child exited during the restore: %v", child.Err)
	case <-ctx.Done():
		t.Fatal("the child did not start again in time")
	}
	close(restarted)
	if base2 != base {
		t.Errorf("the restarted server listens on %s, want the same address %s", base2, base)
	}
	if got := listenInode(t, base); got != inode {
		t.Errorf("the listening socket after the restore is inode %s, want the one handed over, %s", got, inode)
	}
	if r := <-inWindow; !r.answered() {
		t.Errorf("a request sent while the process restarted: %s; want 200, or 503 %q", r, "The server is restarting, try again later.")
	}
	rs := <-probes
	for _, r := range rs {
		if !r.answered() {
			t.Errorf("a request sent during the restart: %s; want 200, or 503 %q", r, "The server is restarting, try again later.")
		}
	}
	t.Logf("%d requests sent during the restart, all answered", len(rs))
	checkChildFDs(t, pid, fds)
	if code, b := call("GET", base2+"/api/health", "", ""); code != 200 {
		t.Fatalf("health after the restore: %d %s", code, b)
	}
	if got := users(base2); !slices.Equal(got, []string{"first@example.com"}) {
		t.Errorf("users after the restore = %q, want only first@example.com", got)
	}
	// The new image holds the dir lock, under the same PID.
	if l, err := app.LockDir(dir); err == nil {
		l.Unlock()
		t.Error("the data dir is not locked after the restart")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".lock")); strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Errorf(".lock holds %q, want the PID %d", b, pid)
	}
	// Once it serves, the old data is deleted, and the log says so. This
	// waits on the child, bounded by the test's deadline.
	for !strings.Contains(stderr.String(), "restore: complete, serving the restored data") {
		select {
		case <-ctx.Done():
			t.Fatal("the restore did not complete after the restored data served")
		case <-time.After(10 * time.Millisecond):
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, backup.WorkDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old data is kept after the restore completed: %v", err)
	}
	for _, want := range []string{"restore: extracted", "restore: restarting the process"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the child's log lacks %q", want)
		}
	}
}

// healthProbe is the outcome of a GET /api/health.
type healthProbe struct {
	code int
	body string
	err  error
}

func (r healthProbe) String() string {
	if r.err != nil {
		return r.err.Error()
	}
	return fmt.Sprintf("%d %s", r.code, r.body)
}

// answered reports whether the server answered 200, or the 503 envelope
// of a restart.
func (r healthProbe) answered() bool {
	return r.err == nil && (r.code == 200 ||
		r.code == 503 && strings.Contains(r.body, `"message":"The server is restarting, try again later."`))
}

// probe sends GET /api/health on a new connection, waiting at most 30 s
// for the answer.
func probeHealth(ctx context.Context, base string) healthProbe {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/api/health", nil)
	if err != nil {
		return healthProbe{err: err}
	}
	res, err := client.Do(req)
	if err != nil {
		return healthProbe{err: err}
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return healthProbe{code: res.StatusCode, body: string(b), err: err}
}

// archiveLive writes an archive of the data dir of a running server, from
// the files as they are: the stores are append-only, so the first Size
// bytes of each file are a state they held (a torn last record is repaired
// on open).
func archiveLive(t *testing.T, dir, key string) {
	t.Helper()
	var src backup.Source
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." {
			return nil
		}
		if backup.Excluded(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		src = append(src, backup.File{Name: filepath.ToSlash(rel), Size: fi.Size(), Open: func() (io.ReadCloser, error) { return os.Open(p) }})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := backup.OpenDir(filepath.Join(dir, "backups"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := d.Create(t.Context(), key, src, backup.Meta{}); err != nil {
		t.Fatal(err)
	}
}

// TestBackupRestoreCLI: `strongbox backup restore` on a stopped server's
// data dir, and its refusal while a server runs there.
func TestBackupRestoreCLI(t *testing.T) {
	dir := t.TempDir()
	env := envOf("STRONGBOX_BCRYPT_COST", "4")
	cli := func(args ...string) (string, error) {
		t.Helper()
		var out bytes.Buffer
		err := run(t.Context(), append(args, "--dir", dir), env, &out, io.Discard)
		return out.String(), err
	}
	if _, err := cli("superuser", "create", "a@example.com", "password123"); err != nil {
		t.Fatal(err)
	}
	archiveLive(t, dir, "one.zip")
	if _, err := cli("superuser", "create", "b@example.com", "password123"); err != nil {
		t.Fatal(err)
	}
	out, err := cli("backup", "restore", "one.zip")
	if err != nil || !strings.Contains(out, "Restored one.zip into "+dir) {
		t.Fatalf("backup restore = %q, %v", out, err)
	}
	if out, err := cli("superuser", "delete", "b@example.com"); err != nil || !strings.Contains(out, "missing or already deleted") {
		t.Errorf("b@example.com after the restore: %q, %v; want it gone", out, err)
	}
	if out, err := cli("superuser", "create", "a@example.com", "password123"); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("a@example.com after the restore: %q, %v; want it there", out, err)
	}
	if _, err := os.Lstat(filepath.Join(dir, backup.WorkDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the work folder is left after the restore: %v", err)
	}
	if _, err := cli("backup", "restore", "nope.zip"); !errors.Is(err, backup.ErrNotFound) {
		t.Errorf("restore of a missing key = %v, want ErrNotFound", err)
	}

	ts := startServer(t, dir, nil)
	// A server inside this test's process refuses to restart by exec,
	// which would replace the test.
	res, err := http.Post(ts.base+"/api/collections/_superusers/auth-with-password", "application/json",
		strings.NewReader(`{"identity":"a@example.com","password":"password123"}`))
	if err != nil {
		t.Fatal(err)
	}
	var auth struct{ Token string }
	json.NewDecoder(res.Body).Decode(&auth)
	res.Body.Close()
	req, _ := http.NewRequestWithContext(t.Context(), "POST", ts.base+"/api/backups/one.zip/restore", nil)
	req.Header.Set("Authorization", auth.Token)
	res, err = (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 400 || !strings.Contains(string(body), "needs a server started by `strongbox serve`") {
		t.Errorf("restore through an in-process server: %d %s, want a 400 saying why", res.StatusCode, body)
	}
	if _, err := cli("backup", "restore", "one.zip"); err == nil || !strings.Contains(err.Error(), "in use") || !strings.Contains(err.Error(), "POST /api/backups/one.zip/restore") {
		t.Errorf("restore while a server runs = %v, want an in-use error pointing to the API", err)
	}
	ts.stop()
}
