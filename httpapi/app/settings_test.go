package app

import (
	"encoding/json"
	"net/url"
	"slices"
	"testing"

	"strongbox/httpapi/api"
	"strongbox/httpapi/settings"
)

// TestSubscribeSettingsEndsEverySubscription: subscribeSettings applies
// the settings at once and on every change, and the function it returns
// ends every subscription it made (a change after it reaches none).
func TestSubscribeSettingsEndsEverySubscription(t *testing.T) {
	t.Parallel()
	s := New(Config{Options: Options{Dir: t.TempDir(), BcryptCost: 4}})
	st, err := openStores(s.cfg.Options, true)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := api.NewServer(api.Config{Auth: st.Auth, Logs: st.Logs, Settings: st.Settings})
	// applied reads what two of the subscribers applied: the schedule's
	// cronMaxKeep and the mail transport's SMTP host.
	applied := func() (keep int, host string) {
		s.auto.mu.Lock()
		defer s.auto.mu.Unlock()
		return s.auto.keep.Last, s.mailTransport.Load().SMTP.Host
	}
	update := func(keep int, host string) {
		t.Helper()
		_, err := st.Settings.Update(func(v *settings.Settings) error {
			v.Backups.CronMaxKeep, v.SMTP.Host = keep, host
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	unsubscribe := s.subscribeSettings(st, srv)
	check := func(when string, wantKeep int, wantHost string) {
		t.Helper()
		if keep, host := applied(); keep != wantKeep || host != wantHost {
			t.Errorf("%s: applied cronMaxKeep %d, SMTP host %q; want %d, %q", when, keep, host, wantKeep, wantHost)
		}
	}
	check("at once", 3, "smtp.example.com")
	update(7, "mail.example.com")
	check("after a change", 7, "mail.example.com")
	unsubscribe()
	update(8, "other.example.com")
	check("after unsubscribe", 7, "mail.example.com")
}

// TestLogSettingsFollowed: the log store follows settings.logs through its
// own subscription, from the start and after a restart (which reopens the
// stores and subscribes the new log store): a change to minLevel or
// maxDays PATCH /api/settings acknowledged is in effect for the next
// request, and maxDays 0 drops the stored logs.
func TestLogSettingsFollowed(t *testing.T) {
	t.Parallel()
	ts := startServer(t, t.TempDir(), nil, nil)
	token := ts.login(t)
	patch := func(body string) {
		t.Helper()
		if code, b, err := ts.do(t, "PATCH", "/api/settings", token, body); err != nil || code != 200 {
			t.Fatalf("PATCH /api/settings %s: %d %s %v", body, code, b, err)
		}
	}
	get := func(path string) {
		t.Helper()
		if _, _, err := ts.do(t, "GET", path, "", ""); err != nil {
			t.Fatal(err)
		}
	}
	// logged returns the messages of the stored requests with an m= query.
	logged := func() []string {
		t.Helper()
		if err := ts.stores.Logs.Flush(); err != nil {
			t.Fatal(err)
		}
		code, b, err := ts.do(t, "GET", "/api/logs?sort=created&perPage=100&filter="+url.QueryEscape(`data.url ~ "m="`), token, "")
		if err != nil || code != 200 {
			t.Fatalf("GET /api/logs: %d %s %v", code, b, err)
		}
		var p struct{ Items []struct{ Message string } }
		if err := json.Unmarshal(b, &p); err != nil {
			t.Fatal(err)
		}
		var msgs []string
		for _, it := range p.Items {
			msgs = append(msgs, it.Message)
		}
		return msgs
	}
	want := func(round string, msgs ...string) {
		t.Helper()
		if got := logged(); !slices.Equal(got, msgs) {
			t.Errorf("%s: logged %q, want %q", round, got, msgs)
		}
	}

	for round, restart := range []bool{false, true} {
		name := []string{"at start", "after a restart"}[round]
		if restart {
			if err := ts.Restart(t.Context(), nil); err != nil {
				t.Fatal(err)
			}
		}
		patch(`{"logs":{"maxDays":5,"minLevel":0}}`)
		get("/api/health?m=info")
		patch(`{"logs":{"minLevel":4}}`)
		get("/api/health?m=below") // level 0: below minLevel, not kept
		get("/api/nope?m=error")   // level 8: kept
		want(name, "GET /api/health?m=info", "GET /api/nope?m=error")
		patch(`{"logs":{"maxDays":0}}`)
		want(name + ", maxDays 0")
		get("/api/nope?m=off")
		want(name + ", a request with maxDays 0")
	}
}
