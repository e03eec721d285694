package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The requests TestDashboardLogsBrowser logs as a guest: a hostile URL
// that must show as text, one with an encoded CR LF, and three the
// filter step finds by a bare word.
var dashLogsSeed = []string{
	"/api/x?<img%20src=x%20onerror=alert(1)>",
	"/api/y?a=%0d%0aSet-Cookie:%20x=1",
	"/api/zzfilter/1", "/api/zzfilter/2", "/api/zzfilter/3",
	"/api/health",
}

// TestDashboardLogsBrowser drives the Logs screen in headless Chromium
// (testdata/dashboard/logs.mjs): after guest requests seed the logs, the
// superuser signs in; the chart's hourly totals equal GET /api/logs/stats;
// a bare word narrows the list and the chart; the detail panel shows the
// fields; the hostile URL shows as text and runs nothing; the deep link
// #/logs?logId= opens the panel; the logs settings say the export is off
// (naming OTEL_EXPORTER_OTLP_LOGS_ENDPOINT) and, on a second server
// exporting to an httptest receiver, show its state without secrets; no
// console error, page error or dialog.
// It runs and skips as TestDashboardBrowser does (same variables).
func TestDashboardLogsBrowser(t *testing.T) {
	chromium, pptr, node := browserTools(t)
	ts, d := dashServed(t, nil)
	for _, p := range dashLogsSeed {
		d.call("GET", p, "", "")
	}
	d.su = d.login("_superusers", dashEmail, dashPassword)
	// The hostile request's log, once the store holds it.
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	var hostile struct {
		ID   string
		Data struct{ URL string }
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for ; hostile.ID == ""; <-tick.C {
		var page struct{ Items []json.RawMessage }
		b := d.mustCall("GET", "/api/logs?filter="+url.QueryEscape(`data.url~"onerror"`), d.su, "", 200)
		if json.Unmarshal(b, &page) == nil && len(page.Items) > 0 && json.Unmarshal(page.Items[0], &hostile) != nil {
			t.Fatalf("log %s", page.Items[0])
		}
		if hostile.ID == "" && ctx.Err() != nil {
			t.Fatal("the hostile request was not logged within 90 s")
		}
	}
	// A second server exports its logs to a receiver that takes them all;
	// its variables hold secrets the dashboard must not show.
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer recv.Close()
	host := strings.TrimPrefix(recv.URL, "http://")
	ex := startServer(t, t.TempDir(), map[string]string{
		"STRONGBOX_SUPERUSER_EMAIL": dashEmail, "STRONGBOX_SUPERUSER_PASSWORD": dashPassword,
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://agent:pw-zz9@" + host + "/v1/logs?token=tk-zz9",
		"OTEL_EXPORTER_OTLP_LOGS_HEADERS":  "x-api-key=key-zz9",
	})
	cfg := map[string]any{
		"base": ts.base, "chromium": chromium, "shots": dashArtifacts(t),
		"email": dashEmail, "password": dashPassword,
		"hostileID": hostile.ID, "hostileURL": hostile.Data.URL, "word": "zzfilter", "wordCount": 3, "maxDays": 9,
		"exportBase": ex.base, "exportEndpoint": recv.URL + "/v1/logs", "exportSecrets": []string{"pw-zz9", "tk-zz9", "key-zz9", "agent"},
	}
	out := runDashScript(t, ctx, node, pptr, "logs.mjs", cfg, 0)
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllString(out, -1)); n != 12 {
		t.Fatalf("%d steps passed, want 12", n)
	}
	if !strings.Contains(out, "export-off ") || !strings.Contains(out, `export-on {"summary":"Up to date"`) {
		t.Error("the export's state, off and on, was not shown")
	}
	// The settings form saved what it was given; its error was the
	// envelope's.
	var set struct{ Logs struct{ MaxDays int } }
	if b := d.mustCall("GET", "/api/settings", d.su, "", 200); json.Unmarshal(b, &set) != nil || set.Logs.MaxDays != 9 {
		t.Errorf("after the settings form, GET /api/settings logs.maxDays = %d, want 9 (%s)", set.Logs.MaxDays, b)
	}
	if !strings.Contains(out, `filter-problem "The filter is not valid at the end: expected operand`) {
		t.Error("a bad filter's position was not shown")
	}
	if !strings.Contains(out, `per minute","`) {
		t.Error("narrowed to one hour, the chart did not count by minute")
	}
	if !strings.Contains(out, `settings-error "Must be no less than 0."`) {
		t.Error(`the settings form did not show maxDays's error "Must be no less than 0." next to the field`)
	}
}
