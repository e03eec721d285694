package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/backup/s3"
	"strongbox/backup/s3/s3test"
	"strongbox/backup/stream"
	"strongbox/logstore"
)

// TestStreamRestoreFigures measures the restore time of the issue's
// figure: a data dir of 1,000,000 logs and 100,000 users shipped to
// versitygw (a base, then 200 increments of 10 users each), restored
// latest and --at the middle of the increments. It runs only with
// STRONGBOX_STREAM_FIGURES=1 and the gateway.
func TestStreamRestoreFigures(t *testing.T) {
	if os.Getenv("STRONGBOX_STREAM_FIGURES") == "" {
		t.Skip("set STRONGBOX_STREAM_FIGURES=1 to measure")
	}
	g := s3test.Start(t)
	st, _, add := figureStores(t)
	client, err := s3.New(s3.Config{Endpoint: g.Endpoint, Region: g.Region, Bucket: g.Bucket, AccessKey: g.AccessKey, Secret: g.Secret, ForcePathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	capture := func() (*stream.Capture, error) {
		c, err := st.Capture(nil)
		if err != nil {
			return nil, err
		}
		out := &stream.Capture{Time: c.Created, Close: c.Close}
		for i, sec := range c.sections {
			out.Files = append(out.Files, stream.FromSection(c.Source[i].Name, sec))
		}
		return out, nil
	}
	start := time.Now()
	sh := stream.Start(stream.Options{Bucket: client, Capture: capture, Interval: 20 * time.Millisecond})
	for sh.Status().Objects == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("base shipped in %s: %d bytes", time.Since(start).Round(time.Millisecond), sh.Status().Bytes)
	var mid time.Time
	for i := range 200 {
		add(10)
		for want := sh.Status().Objects + 1; sh.Status().Objects < want; {
			time.Sleep(5 * time.Millisecond)
		}
		if i == 100 {
			mid = time.Now()
		}
	}
	sh.Stop()
	for _, tc := range []struct {
		name string
		at   time.Time
	}{{"latest", time.Time{}}, {"--at the middle", mid}} {
		out := filepath.Join(t.TempDir(), "r")
		start := time.Now()
		res, err := stream.Restore(context.Background(), stream.RestoreOptions{Bucket: client, At: tc.at}, out)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("restore %s: %s (%d objects, %d bytes)", tc.name, time.Since(start).Round(time.Millisecond), res.Objects, res.Bytes)
	}
}

// figureStores opens the stores of a data dir of 1,000,000 seeded logs
// and 100,000 users, for the figures; add(k) adds k more users, with
// consecutive ids, and the collection is the users'.
func figureStores(t *testing.T) (*Stores, *authn.Collection, func(k int)) {
	t.Helper()
	dir := t.TempDir()
	if err := logstore.Seed(filepath.Join(dir, "logs"), 1_000_000, logstore.Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := Open(Options{Dir: dir, BcryptCost: 4}, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	users, ok := st.Auth.Collection("users")
	if !ok {
		t.Fatal("no users collection")
	}
	hash, _ := bcrypt.GenerateFromPassword([]byte("password123"), bcrypt.MinCost)
	n := 0
	add := func(k int) {
		at := time.Now().UTC()
		recs := make([]*authn.Record, 0, k)
		for range k {
			id := fmt.Sprintf("u%014d", n)
			recs = append(recs, &authn.Record{ID: id, Email: id + "@example.com", PasswordHash: string(hash),
				TokenKey: "tk_" + id + "_0123456789012345678901234567", Created: at, Updated: at})
			n++
		}
		if skips, err := st.Auth.ImportRecords(users, recs); err != nil || len(skips) > 0 {
			t.Fatalf("import: %v %v", skips, err)
		}
	}
	for range 10 {
		add(10_000)
	}
	return st, users, add
}
