package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestKnownObserved: an entry whose observation matches the run's is
// KNOWN; a doctored one (another observation) is CHANGED and fails the
// run, in the text, JSON and JUnit reports alike; a line without an
// observation matches by ID alone; a listed requirement that passes is
// stale. Without the comparison of observations in applyKnown, the
// doctored entry would be KNOWN and this test fails.
func TestKnownObserved(t *testing.T) {
	srv := stubServer(t, http.StatusOK)
	const answer = `400 {"data":{},"message":"Invalid filter format.","status":400} (GET /api/logs/stats?filter=cf_x7k2m9q1)`
	fail := func(context.Context, *Client) error { return Mismatch(`200`, answer) }
	list := filepath.Join(t.TempDir(), "impl-2.tsv")
	os.WriteFile(list, []byte("T-K-001\trefuses it\t400 \"Invalid filter format.\"\n"+
		"T-K-002\trefuses it\t400 \"Something else.\"\n"+
		"T-K-003\tan entry of an older list\n"+
		"T-K-004\tused to refuse it\t400 \"Invalid filter format.\"\n"+
		"T-K-005\ta race\tsometimes\n"+
		"T-K-006\ta race\tsometimes\n"), 0o644)
	pass := func(context.Context, *Client) error { return nil }
	reqs := []*Requirement{stubReq("T-K-001", fail), stubReq("T-K-002", fail), stubReq("T-K-003", fail),
		stubReq("T-K-004", pass), stubReq("T-K-005", fail), stubReq("T-K-006", pass)}
	rep := runRequirements(t.Context(), Config{BaseURL: srv.URL, Email: "a@b.c", Password: "p", Known: list}, reqs)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	want := []Outcome{Known, Changed, Known, Pass, Known, Pass}
	for i, res := range rep.Results {
		if res.Outcome != want[i] {
			t.Errorf("%s: %s, want %s", res.Req.ID, res.Outcome, want[i])
		}
		if i < 3 && res.Observed != `400 "Invalid filter format."` {
			t.Errorf("%s: Observed = %q", res.Req.ID, res.Observed)
		}
	}
	if tl := rep.Tally(); tl != (Tally{Passed: 2, Known: 3, Changed: 1}) {
		t.Errorf("Tally() = %+v", tl)
	}
	if rep.OK() {
		t.Errorf("OK() = true with a changed deviation")
	}
	// The stub has no records API, so a note also says the run went on
	// as the given superuser (no throwaway): only the known list's count.
	var stale []string
	for _, n := range rep.Notes {
		if strings.Contains(n, "listed as a known deviation") {
			stale = append(stale, n)
		}
	}
	if len(stale) != 1 || !strings.Contains(stale[0], "T-K-004") {
		t.Errorf("notes = %q, want the stale T-K-004 only (an intermittent entry that passes is not stale)", rep.Notes)
	}

	var text bytes.Buffer
	rep.Print(&text)
	for _, frag := range []string{
		"CHANGED T-K-002",
		"      known:    refuses it\n      recorded: 400 \"Something else.\"\n      observed: 400 \"Invalid filter format.\"\n",
		"KNOWN T-K-001",
		"note: T-K-004 passed but is listed as a known deviation of impl-2 (used to refuse it): the entry is stale",
		"\n2 passed, 0 failed, 0 skipped, 3 known, 1 changed\n",
	} {
		if !strings.Contains(text.String(), frag) {
			t.Errorf("text report does not contain %q:\n%s", frag, text.String())
		}
	}

	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var got jsonReport
	if err := json.Unmarshal(js.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if c := got.Results[1]; c.Outcome != "CHANGED" || c.Recorded != `400 "Something else."` || c.Observed != `400 "Invalid filter format."` {
		t.Errorf("JSON of the changed entry = %+v", c)
	}
	if s := got.Results[3]; !s.Stale || got.Results[0].Stale || got.Results[5].Stale || got.Summary.Changed != 1 {
		t.Errorf("JSON: stale %v on the pass, %v on the known; summary %+v", s.Stale, got.Results[0].Stale, got.Summary)
	}

	var ju bytes.Buffer
	if err := rep.WriteJUnit(&ju); err != nil {
		t.Fatal(err)
	}
	var suites junitSuites
	if err := xml.Unmarshal(ju.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	cases := suites.Suites[0].Cases
	if f := cases[1].Failure; suites.Failures != 1 || f == nil || f.Type != "CHANGED" ||
		!strings.HasSuffix(f.Message, `impl-2.tsv changed: recorded 400 "Something else.", observed 400 "Invalid filter format."`) {
		t.Errorf("JUnit: %d failures, the changed entry's failure %+v", suites.Failures, f)
	}
	if !strings.HasPrefix(cases[3].SystemOut, "stale: listed as a known deviation of ") {
		t.Errorf("JUnit: the stale entry's system-out = %q", cases[3].SystemOut)
	}
}

// TestObservation: what changes from run to run (fixture names, ids,
// tokens, times, a body cut short) is left out of an observation, and what
// tells two deviations apart stays in.
func TestObservation(t *testing.T) {
	for _, tc := range []struct{ name, actual, detail, want string }{
		{"envelope", `403 {"data":{},"message":"The authorized record is not allowed to perform this action.","status":403} (GET /api/backups)`, "",
			`403 "The authorized record is not allowed to perform this action."`},
		{"data codes sorted", `400 {"data":{"name":{"code":"validation_b"},"file":{"code":"validation_a","message":"x"}},"message":"Bad.","status":400} (POST /api/backups/upload)`, "",
			`400 "Bad." data.file=validation_a data.name=validation_b`},
		{"object keys", `200 {"record":{"email":"cf-xsa6av3y9aqx@example.com","created":"2026-12-02 06:52:41.837Z"},"token":"eyJhbGciOiJIUzI1NiJ9.eyJpZCI6IngifQ.c2ln"} (GET /api/collections/users/auth-refresh)`, "",
			`200 {record, token}`},
		{"body cut short", `400 {"message":"Cut.","data":{"a":{"code":"x","message":"` + strings.Repeat("y", 380) + `… (GET /x)`, "", `400 "Cut."`},
		{"words before the answer", `"Invalid filter format." in 400 {"data":{"file":{"code":"validation_x"}},"message":"Invalid filter format.","status":400} (GET /api/logs/stats?filter=cf_ab12cd)`, "",
			`400 "Invalid filter format." data.file=validation_x`},
		{"object cut short", `200 {"record":{"avatar":"","created":"2026-12-02 06:52:41.837Z","email":"cf-xsa6av3y9aqx@example.com"},"meta":1,"emailVisibility":fal… (GET /api/collections/users/auth-refresh)`, "",
			`200 {record, meta, emailVisibility, …}`},
		{"no JSON", `502 <html>bad gateway</html> (GET /api/health)`, "", `502 <html>bad gateway</html>`},
		{"volatile text", "an exp claim, exp 1765432100, id ab12cd34ef56gh7 at 2026-12-02T06:52:41Z for cf_a1b2c3d4", "",
			"an exp claim, exp <n>, id <id> at <time> for cf-<random>"},
		{"detail without actual", "", "no token in\tthe answer", "no token in the answer"},
	} {
		got := observation(Result{Actual: tc.actual, Detail: tc.detail})
		if got != tc.want {
			t.Errorf("%s: observation = %q, want %q", tc.name, got, tc.want)
		}
	}
	long := observation(Result{Actual: strings.Repeat("é", 300)})
	if n := utf8.RuneCountInString(long); n != observationMax || !strings.HasSuffix(long, "…") {
		t.Errorf("a long observation has %d characters: %q", n, long)
	}
}

// TestRecordKnown: a list is rewritten from runs with its comments and
// reasons kept, observations refreshed, passing entries dropped, entries
// not run kept, and new failures appended with the placeholder reason.
func TestRecordKnown(t *testing.T) {
	old := "# header\n\n# group\nT-R-001\tfails\t400 \"old\"\nT-R-002\tused to fail\nT-R-003\tnot run\t404 \"x\"\n" +
		"T-R-006\ta race\tsometimes\nT-R-007\ta race\tsometimes\n"
	req := func(id string) *Requirement { return &Requirement{ID: id} }
	runs := []Report{
		{Results: []Result{{Req: req("T-R-001"), Outcome: Changed, Observed: `400 "new"`}, {Req: req("T-R-002"), Outcome: Pass},
			{Req: req("T-R-004"), Outcome: Fail, Observed: `500 "Boom."`}}},
		{Results: []Result{{Req: req("T-R-001"), Outcome: Fail, Observed: `400 "other"`}, {Req: req("T-R-005"), Outcome: Skip},
			{Req: req("T-R-006"), Outcome: Pass}, {Req: req("T-R-007"), Outcome: Known, Observed: `2 successes`}}},
	}
	got := string(RecordKnown([]byte(old), runs...))
	want := "# header\n\n# group\nT-R-001\tfails\t400 \"new\"\nT-R-003\tnot run\t404 \"x\"\n" +
		"T-R-006\ta race\tsometimes\nT-R-007\ta race\tsometimes\n" +
		"\n# Recorded by the suite: write each reason.\nT-R-004\t" + placeholderReason + "\t500 \"Boom.\"\n"
	if got != want {
		t.Errorf("RecordKnown =\n%s\nwant\n%s", got, want)
	}
	l, err := parseKnown("x", []byte(got))
	if err != nil || l.Observed["T-R-004"] != `500 "Boom."` || l.Reasons["T-R-001"] != "fails" {
		t.Errorf("the recorded list does not parse back: %v %+v", err, l)
	}
}

// FuzzParseKnown: no input makes parseKnown panic, and a list it accepts
// survives RecordKnown with no runs unchanged in meaning.
func FuzzParseKnown(f *testing.F) {
	f.Add([]byte("# c\n\nA-001\treason\t400 \"m\"\nA-002\treason only\n"))
	f.Add([]byte("A-001\t\t\n"))
	f.Add([]byte("A-001\tr\to\tmore\r\n"))
	if b, err := os.ReadFile("known/pocketbase-0.31.0.tsv"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := parseKnown("f", data)
		if err != nil {
			return
		}
		again, err := parseKnown("f", RecordKnown(data))
		if err != nil {
			t.Fatalf("RecordKnown's output does not parse: %v", err)
		}
		if strings.Join(again.IDs, ",") != strings.Join(l.IDs, ",") {
			t.Fatalf("IDs %v became %v", l.IDs, again.IDs)
		}
		for _, id := range l.IDs {
			if again.Reasons[id] != l.Reasons[id] || again.Observed[id] != l.Observed[id] {
				t.Fatalf("%s: %q %q became %q %q", id, l.Reasons[id], l.Observed[id], again.Reasons[id], again.Observed[id])
			}
		}
	})
}

// FuzzObservation: an observation is one bounded line, whatever a check
// reported, and reducing it again changes nothing (unless it was cut: a
// cut can end a word where a placeholder's pattern then matches).
func FuzzObservation(f *testing.F) {
	f.Add(`403 {"data":{},"message":"The authorized record is not allowed to perform this action.","status":403} (GET /api/backups)`)
	f.Add(`400 {"data":{"file":{"code":"validation_invalid_mime_type"}},"message":"m","status":400} (POST /x)`)
	f.Add(`200 {"record":{},"token":"eyJ.a.b"} (GET /y)`)
	f.Add("an exp claim, expiring in 168h (7 days)")
	f.Add("400 {\"message\":\"\\\"q\\\"\" (GET /z)")
	f.Fuzz(func(t *testing.T, actual string) {
		o := observation(Result{Actual: actual})
		if strings.ContainsAny(o, "\t\n\r") || utf8.RuneCountInString(o) > observationMax {
			t.Fatalf("observation(%q) = %q: not one bounded line", actual, o)
		}
		if utf8.ValidString(actual) && !strings.HasSuffix(o, "…") && stableText(o) != o {
			t.Fatalf("observation(%q) = %q, and reduced again %q", actual, o, stableText(o))
		}
	})
}

// BenchmarkObservation: the cost a failing result adds to a run.
func BenchmarkObservation(b *testing.B) {
	res := Result{Actual: `"An error occurred while validating the submitted data." in 400 {"data":{"file":{"code":"validation_invalid_mime_type",` +
		`"message":"\"cf-x7k2m9q1_ci3n691e2o.zip\" is not a valid zip."}},"message":"An error occurred while validating the submitted data.",` +
		`"status":400} (POST /api/backups/upload)`}
	for b.Loop() {
		observation(res)
	}
}
