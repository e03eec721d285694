package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"strongbox/backup/age"
	"strongbox/backup/s3/s3test"
	"strongbox/backup/stream"
	"strongbox/httpapi/app/throwaway"
)

const (
	streamEmail    = "stream@localhost"
	streamPassword = "stream-password"
)

// signUp is one acknowledged sign-up: the instants its request was sent
// and its answer came.
type signUp struct {
	email       string
	sent, acked time.Time
}

// streamChild starts the real binary on a new data dir with continuous
// backup to the gateway g (through endpoint, a FaultProxy or g itself).
func streamChild(t *testing.T, ctx context.Context, g s3test.Gateway, endpoint string) *throwaway.Process {
	t.Helper()
	log := &syncBuffer{}
	c, err := throwaway.StartProcess(ctx, strongboxBinary(t), "127.0.0.1:0", t.TempDir(),
		[]string{"STRONGBOX_BCRYPT_COST=4", "STRONGBOX_SUPERUSER_EMAIL=" + streamEmail, "STRONGBOX_SUPERUSER_PASSWORD=" + streamPassword}, log)
	if err != nil {
		t.Fatalf("start: %v\n%s", err, log)
	}
	t.Cleanup(func() {
		c.Cmd.Process.Kill()
		<-c.Done
		if t.Failed() {
			t.Logf("the server's log:\n%s", log)
		}
	})
	s3 := s3Of(g)
	s3["endpoint"] = endpoint
	token := streamLogin(t, c.Base)
	body, _ := json.Marshal(map[string]any{"backups": map[string]any{"s3": s3, "continuous": map[string]any{"enabled": true}}})
	if code, out := streamDo(t, http.MethodPatch, c.Base+"/api/settings", token, body); code != http.StatusOK {
		t.Fatalf("enable continuous backup: %d %s", code, out)
	}
	return c
}

func streamLogin(t *testing.T, base string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"identity": streamEmail, "password": streamPassword})
	code, out := streamDo(t, http.MethodPost, base+"/api/collections/_superusers/auth-with-password", "", body)
	var v struct{ Token string }
	if code != http.StatusOK || json.Unmarshal(out, &v) != nil {
		t.Fatalf("login: %d %s", code, out)
	}
	return v.Token
}

func streamDo(t *testing.T, method, url, token string, body []byte) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res.StatusCode, buf.Bytes()
}

// signUps signs users up one after another until stop is closed, and
// returns those acknowledged.
func signUps(base string, stop <-chan struct{}, n *atomic.Int64) []signUp {
	var out []signUp
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		select {
		case <-stop:
			return out
		default:
		}
		email := fmt.Sprintf("u%d@example.com", n.Add(1))
		body := fmt.Sprintf(`{"email":%q,"password":"password123","passwordConfirm":"password123"}`, email)
		sent := time.Now()
		res, err := client.Post(base+"/api/collections/users/records", "application/json", strings.NewReader(body))
		if err != nil {
			return out // the server is gone
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			out = append(out, signUp{email, sent, time.Now()})
		}
	}
}

// restoreCLI runs `strongbox restore` in this process against g.
func restoreCLI(t *testing.T, g s3test.Gateway, args ...string) (string, error) {
	t.Helper()
	return restoreCLIWith(t, g, "", args...)
}

// restoreCLIWith is restoreCLI with STRONGBOX_AGE_IDENTITY set to identity.
func restoreCLIWith(t *testing.T, g s3test.Gateway, identity string, args ...string) (string, error) {
	t.Helper()
	var out, errOut syncBuffer
	env := envOf("AWS_ACCESS_KEY_ID", g.AccessKey, "AWS_SECRET_ACCESS_KEY", g.Secret, "AWS_REGION", g.Region, "STRONGBOX_AGE_IDENTITY", identity)
	err := run(context.Background(), append([]string{"restore", "s3://" + g.Bucket, "--endpoint", g.Endpoint}, args...), env, &out, &errOut)
	return out.String() + errOut.String(), err
}

// restoredUsers serves dir with the real binary and returns the emails of
// its users.
func restoredUsers(t *testing.T, ctx context.Context, dir string) map[string]bool {
	t.Helper()
	log := &syncBuffer{}
	c, err := throwaway.StartProcess(ctx, strongboxBinary(t), "127.0.0.1:0", dir, []string{"STRONGBOX_BCRYPT_COST=4"}, log)
	if err != nil {
		t.Fatalf("serve the restored dir: %v\n%s", err, log)
	}
	defer c.Stop()
	token := streamLogin(t, c.Base)
	users := map[string]bool{}
	for page := 1; ; page++ {
		code, out := streamDo(t, http.MethodGet, fmt.Sprintf("%s/api/collections/users/records?perPage=500&page=%d&skipTotal=1", c.Base, page), token, nil)
		var v struct{ Items []struct{ Email string } }
		if code != http.StatusOK || json.Unmarshal(out, &v) != nil {
			t.Fatalf("list users: %d %s", code, out)
		}
		for _, u := range v.Items {
			users[u.Email] = true
		}
		if len(v.Items) < 500 {
			return users
		}
	}
}

// TestStreamKill ships a steady load of sign-ups from the real binary to
// versitygw, kills the server with SIGKILL, and restores the bucket alone
// into a new dir, which the real binary then serves: no sign-up
// acknowledged more than a second before the kill is lost. Then it
// restores --at an instant in the middle of the burst: exactly the
// sign-ups acknowledged before it, none sent after it. It prints the
// RPO: the gap between the last acknowledged sign-up and the last one
// restored.
func TestStreamKill(t *testing.T) {
	g := s3test.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := streamChild(t, ctx, g, g.Endpoint)
	stop := make(chan struct{})
	var n atomic.Int64
	done := make(chan []signUp)
	go func() { done <- signUps(c.Base, stop, &n) }()
	time.Sleep(3 * time.Second)
	c.Cmd.Process.Kill()
	killed := time.Now()
	close(stop)
	acked := <-done
	<-c.Done
	if len(acked) < 20 {
		t.Fatalf("only %d sign-ups acknowledged", len(acked))
	}

	out, err := restoreCLI(t, g, "--list")
	if err != nil || !strings.Contains(out, "restorable from") {
		t.Fatalf("restore --list: %v\n%s", err, out)
	}
	dir := filepath.Join(t.TempDir(), "latest")
	if out, err := restoreCLI(t, g, "--dir", dir); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	users := restoredUsers(t, ctx, dir)
	var lastRestored time.Time
	for _, s := range acked {
		switch {
		case users[s.email]:
			lastRestored = s.acked
		case killed.Sub(s.acked) > time.Second:
			t.Errorf("%s acknowledged %s before the kill is lost", s.email, killed.Sub(s.acked))
		}
	}
	t.Logf("RPO: %d sign-ups acknowledged, %d restored; the last acknowledged %s after the last restored one",
		len(acked), len(users), acked[len(acked)-1].acked.Sub(lastRestored).Round(time.Millisecond))

	mid := acked[len(acked)/2].acked.Add(time.Millisecond)
	at := mid.UTC().Format(stream.TimeLayout)
	atT, _ := time.Parse(stream.TimeLayout, at)
	dir = filepath.Join(t.TempDir(), "at")
	if out, err := restoreCLI(t, g, "--dir", dir, "--at", at); err != nil {
		t.Fatalf("restore --at: %v\n%s", err, out)
	}
	users = restoredUsers(t, ctx, dir)
	for _, s := range acked {
		if s.acked.Before(atT) && !users[s.email] {
			t.Errorf("%s acknowledged before %s is missing", s.email, at)
		}
		if s.sent.After(atT) && users[s.email] {
			t.Errorf("%s sent after %s is restored", s.email, at)
		}
	}
	if out, err := restoreCLI(t, g, "--dir", filepath.Join(t.TempDir(), "x"), "--at", "2001-01-01 00:00:00.000Z"); err == nil || !strings.Contains(err.Error(), "before the oldest restore point") {
		t.Fatalf("restore --at before the range: %v\n%s", err, out)
	}
}

// TestStreamEncrypted: with backups.encryption on, the stream's new
// generation is age files: nothing written after the change (the
// identity itself, the new users) is plaintext in the bucket, a restore
// without the identity is refused saying what to give, and with it
// (STRONGBOX_AGE_IDENTITY) the data dir comes back whole.
func TestStreamEncrypted(t *testing.T) {
	g := s3test.Start(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	c := streamChild(t, ctx, g, g.Endpoint)
	token := streamLogin(t, c.Base)
	shipped := func() {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
			_, out := streamDo(t, http.MethodGet, c.Base+"/api/backups/stream", token, nil)
			var st struct{ Behind int64 }
			if json.Unmarshal(out, &st) == nil && st.Behind == 0 && bytes.Contains(out, []byte(`"lastShipped":"2`)) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("the stream did not catch up: %s", out)
			}
		}
	}
	shipped() // a plain generation first: encryption starts another
	id, err := age.GenerateX25519Identity(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"backups": map[string]any{"encryption": map[string]any{"enabled": true, "identity": id.String()}}})
	if code, out := streamDo(t, http.MethodPatch, c.Base+"/api/settings", token, body); code != http.StatusOK {
		t.Fatalf("enable encryption: %d %s", code, out)
	}
	var emails []string
	for i := range 5 {
		email := fmt.Sprintf("enc%d@example.com", i)
		b := fmt.Sprintf(`{"email":%q,"password":"password123","passwordConfirm":"password123"}`, email)
		if code, out := streamDo(t, http.MethodPost, c.Base+"/api/collections/users/records", "", []byte(b)); code != http.StatusOK {
			t.Fatalf("sign up: %d %s", code, out)
		}
		emails = append(emails, email)
	}
	shipped()
	time.Sleep(time.Second) // one more interval: the sign-ups' capture shipped
	encrypted := 0
	for _, name := range g.Files(t) {
		data, err := os.ReadFile(filepath.Join(g.Dir, g.Bucket, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range append([]string{id.String()}, emails...) {
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds %q in plaintext", name, secret)
			}
		}
		if age.IsEncrypted(data) {
			encrypted++
		}
	}
	if gens := len(slices.DeleteFunc(g.Files(t), func(n string) bool { return !strings.HasPrefix(n, "stream/gens/") })); encrypted == 0 || gens < 2 {
		t.Fatalf("%d objects of the stream are age files, in %d generations; want some, in a plain one and an encrypted one", encrypted, gens)
	}
	dir := filepath.Join(t.TempDir(), "r")
	if out, err := restoreCLI(t, g, "--dir", dir); err == nil || !strings.Contains(out+err.Error(), "STRONGBOX_AGE_IDENTITY") {
		t.Errorf("restore without the identity = %v\n%s; want it refused, naming STRONGBOX_AGE_IDENTITY", err, out)
	}
	os.RemoveAll(dir)
	if out, err := restoreCLIWith(t, g, "# created: today\n"+id.String()+"\n", "--dir", dir); err != nil {
		t.Fatalf("restore with the identity: %v\n%s", err, out)
	}
	users := restoredUsers(t, ctx, dir)
	for _, e := range emails {
		if !users[e] {
			t.Errorf("%s is not restored", e)
		}
	}
}

// TestStreamRPOFigures measures the RPO of the figure: for 20
// kills of the real binary at a random point of a steady sign-up load,
// the gap between the last acknowledged sign-up and the last restored
// one. It runs only with STRONGBOX_STREAM_FIGURES=1 (and the gateway).
func TestStreamRPOFigures(t *testing.T) {
	if os.Getenv("STRONGBOX_STREAM_FIGURES") == "" {
		t.Skip("set STRONGBOX_STREAM_FIGURES=1 to measure")
	}
	var gaps []time.Duration
	for i := range 20 {
		g := s3test.Start(t)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		c := streamChild(t, ctx, g, g.Endpoint)
		stop := make(chan struct{})
		var n atomic.Int64
		done := make(chan []signUp)
		go func() { done <- signUps(c.Base, stop, &n) }()
		time.Sleep(time.Second + time.Duration(mrand.Int64N(int64(2*time.Second))))
		c.Cmd.Process.Kill()
		close(stop)
		acked := <-done
		<-c.Done
		dir := filepath.Join(t.TempDir(), "r")
		if out, err := restoreCLI(t, g, "--dir", dir); err != nil {
			t.Fatalf("restore: %v\n%s", err, out)
		}
		users := restoredUsers(t, ctx, dir)
		cancel()
		var last time.Time
		for _, s := range acked {
			if users[s.email] {
				last = s.acked
			}
		}
		gap := acked[len(acked)-1].acked.Sub(last)
		gaps = append(gaps, gap)
		t.Logf("trial %d: %d acknowledged, %d restored, gap %s", i, len(acked), len(users), gap.Round(time.Millisecond))
	}
	slices.Sort(gaps)
	t.Logf("RPO over %d kills: p50 %s, max %s", len(gaps), gaps[len(gaps)/2].Round(time.Millisecond), gaps[len(gaps)-1].Round(time.Millisecond))
}
