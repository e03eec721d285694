package conformance

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sampleReport has one result of each outcome, in two sections.
func sampleReport() Report {
	req := func(id, section string) *Requirement {
		return &Requirement{ID: id, Source: SourceDocument, Section: section, Name: "name of " + id, Text: "text of " + id}
	}
	ex := &Exchange{Method: "GET", Path: "/api/logs?filter=x", Status: 400, Message: "Invalid filter format.", Body: `{"data":{}}`}
	return Report{
		Known: "impl-1",
		Notes: []string{"T-B-002 passed but is listed"},
		Results: []Result{
			{Req: req("T-A-001", "§4.3 GET /api/logs; §7 row 4"), Outcome: Pass, Duration: 12 * time.Millisecond},
			{Req: req("T-A-002", "§4.3 GET /api/logs/stats"), Outcome: Fail, Detail: "expected 200, got 400",
				Expected: "200", Actual: "400 <body>", Exchange: ex},
			{Req: req("T-B-001", "§4.2 POST /api/backups"), Outcome: Skip, Detail: "no backups"},
			{Req: req("T-B-002", "§4.2; §7 row 3"), Outcome: Error, Detail: "connection refused"},
			{Req: req("T-C-001", "issue 8 (hostile clients)"), Outcome: Known, Detail: "expected a, got b",
				Expected: "a", Actual: "b", KnownReason: "it differs", Exchange: ex},
		},
	}
}

func TestWriteJSON(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var got jsonReport
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, buf.String())
	}
	if got.Summary != (jsonTally{Passed: 1, Failed: 1, Skipped: 1, Known: 1, Errored: 1}) {
		t.Errorf("summary = %+v", got.Summary)
	}
	if len(got.Results) != 5 || got.Known != "impl-1" || len(got.Notes) != 1 {
		t.Fatalf("results %d, known %q, notes %v", len(got.Results), got.Known, got.Notes)
	}
	f := got.Results[1]
	if f.ID != "T-A-002" || f.Outcome != "FAIL" || f.Source != "document" || f.Expected != "200" ||
		f.Actual != "400 <body>" || f.Exchange == nil || f.Exchange.Status != 400 || f.Exchange.Message != "Invalid filter format." {
		t.Errorf("failure = %+v", f)
	}
	if k := got.Results[4]; k.Outcome != "KNOWN" || k.KnownReason != "it differs" {
		t.Errorf("known = %+v", k)
	}
	if p := got.Results[0]; p.DurationMS != 12 || p.Exchange != nil || p.Detail != "" {
		t.Errorf("pass = %+v", p)
	}
}

func TestWriteJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := sampleReport().WriteJUnit(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), xml.Header) {
		t.Errorf("no XML header:\n%s", buf.String())
	}
	var got junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if got.Tests != 5 || got.Failures != 1 || got.Errors != 1 || got.Skipped != 2 {
		t.Errorf("testsuites counts = %d tests, %d failures, %d errors, %d skipped", got.Tests, got.Failures, got.Errors, got.Skipped)
	}
	var names []string
	for _, s := range got.Suites {
		names = append(names, s.Name)
		for _, c := range s.Cases {
			if c.Classname != s.Name {
				t.Errorf("%s: classname %q in suite %q", c.Name, c.Classname, s.Name)
			}
		}
	}
	if g := strings.Join(names, ","); g != "§4.3,§4.2,issue 8" {
		t.Errorf("suites = %s, want §4.3,§4.2,issue 8", g)
	}
	logs := got.Suites[0]
	if logs.Tests != 2 || logs.Failures != 1 || len(logs.Cases) != 2 || logs.Time != "0.012" {
		t.Errorf("suite §4.3 = %+v", logs)
	}
	if c := logs.Cases[0]; c.Name != "T-A-001 name of T-A-001" || c.Failure != nil || c.Error != nil || c.Skipped != nil {
		t.Errorf("passing case = %+v", c)
	}
	fail := logs.Cases[1].Failure
	if fail == nil || fail.Message != "expected 200, got 400 <body>" ||
		!strings.Contains(fail.Text, "expected: 200\nactual:   400 <body>\n") ||
		!strings.Contains(fail.Text, `request: GET /api/logs?filter=x → 400 "Invalid filter format."`) {
		t.Errorf("failure = %+v", fail)
	}
	bk := got.Suites[1]
	if bk.Skipped != 1 || bk.Errors != 1 || bk.Cases[0].Skipped == nil || bk.Cases[0].Skipped.Message != "no backups" ||
		bk.Cases[1].Error == nil || bk.Cases[1].Error.Message != "connection refused" {
		t.Errorf("suite §4.2 = %+v", bk)
	}
	kn := got.Suites[2].Cases[0]
	if kn.Skipped == nil || kn.Skipped.Message != "known deviation of impl-1: it differs" || !strings.Contains(kn.SystemOut, "expected: a") {
		t.Errorf("known case = %+v", kn)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.json")
	if err := WriteFile(path, sampleReport().WriteJSON); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || !json.Valid(b) {
		t.Fatalf("report.json: %v, valid %v", err, json.Valid(b))
	}
	// A failing writer leaves the previous file as it was, and no temporary.
	err := WriteFile(path, func(w io.Writer) error { io.WriteString(w, "half"); return errors.New("boom") })
	if err == nil {
		t.Fatal("WriteFile with a failing writer succeeded")
	}
	if b, _ := os.ReadFile(path); !json.Valid(b) {
		t.Errorf("report.json was replaced by a failed write: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("dir holds %v, want only report.json", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x.xml"), sampleReport().WriteJUnit); err == nil {
		t.Error("WriteFile into a missing directory succeeded")
	}
}
