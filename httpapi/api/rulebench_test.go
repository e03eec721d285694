package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/logstore/journal"
)

// noSyncFS is the operating system's file system without fsync: the
// benchmarks below fill a store with 10,000 records, and measure reads,
// which never touch the journal.
type noSyncFS struct{ journal.FS }

type noSyncHandle struct{ journal.Handle }

func (fs noSyncFS) OpenFile(name string, flag int, perm os.FileMode) (journal.Handle, error) {
	h, err := fs.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return noSyncHandle{h}, nil
}

func (noSyncFS) SyncDir(string) error { return nil }
func (noSyncHandle) Sync() error      { return nil }

// newListBench serves the API in process with n users, every other one
// with emailVisibility on, and listRule set to rule on users.
func newListBench(b *testing.B, n int, rule string) http.Handler {
	b.Helper()
	clk := &clock{t: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}
	hasher, err := authn.NewHasher(bcrypt.MinCost, 0)
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	auth, err := authn.Open(filepath.Join(dir, "auth.journal"), authn.Options{Hasher: hasher, Now: clk.Now, FS: noSyncFS{journal.OS}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { auth.Close() })
	_, set, logs := openBenchStores(b, bcrypt.MinCost, clk)
	users, _ := auth.Collection(authn.UsersName)
	users, err = auth.UpdateCollection(users, authn.CollectionInput{Values: map[string]any{"listRule": rule}})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < n; i += 2 {
				if _, err := auth.CreateRecord(b.Context(), users, authn.RecordInput{Values: map[string]any{
					"email": fmt.Sprintf("u%d@example.com", i), "emailVisibility": i%2 == 0,
					"password": "password1", "passwordConfirm": "password1",
				}}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	return NewServer(Config{Auth: auth, Logs: logs, Settings: set, Now: clk.Now})
}

// BenchmarkListThroughRule lists 10,000 users as a guest through a
// listRule that lets half of them through, a page of 30 (the default),
// in process; besides ns/op it reports the median request (p50-ns), which
// the issue bounds at 2 ms.
//
//	go test ./httpapi/api -run - -bench ListThroughRule -count 6
func BenchmarkListThroughRule(b *testing.B) {
	for _, tc := range []struct{ name, rule, query string }{
		{"rule=everyone", "", ""},
		{"rule=filter", "emailVisibility = true && @request.auth.id = '' && @request.method = 'GET'", ""},
		// A guest's filter naming email: each comparison is guarded by
		// the record's emailVisibility (recordFields).
		{"rule=everyone/filter=email", "", "?filter=" + url.QueryEscape("email ~ 'u1%'")},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := newListBench(b, 10000, tc.rule)
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				req := httptest.NewRequest(http.MethodGet, "/api/collections/users/records"+tc.query, nil)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("%d %s", w.Code, w.Body)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
		})
	}
}
