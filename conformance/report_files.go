package conformance

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// The two machine-readable renderings of a Report, as the OCI conformance
// suite writes them beside its text summary: JSON with every field of
// every result, and JUnit XML that CI systems render (one testsuite per
// section of the interface document, one testcase per requirement).

// jsonReport is the JSON form of a Report.
type jsonReport struct {
	Error   string       `json:"error,omitempty"`
	Known   string       `json:"known,omitempty"`
	Summary jsonTally    `json:"summary"`
	Notes   []string     `json:"notes,omitempty"`
	Results []jsonResult `json:"results"`
}

type jsonTally struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	Known   int `json:"known"`
	Changed int `json:"changed"`
	Errored int `json:"errored"`
}

type jsonResult struct {
	ID          string    `json:"id"`
	Source      string    `json:"source"`
	Section     string    `json:"section"`
	Name        string    `json:"name"`
	Text        string    `json:"text"`
	Outcome     string    `json:"outcome"` // PASS, FAIL, SKIP, ERROR, KNOWN or CHANGED
	DurationMS  float64   `json:"durationMs"`
	Detail      string    `json:"detail,omitempty"`
	Expected    string    `json:"expected,omitempty"`
	Actual      string    `json:"actual,omitempty"`
	KnownReason string    `json:"knownReason,omitempty"`
	Observed    string    `json:"observed,omitempty"` // Result.Observed
	Recorded    string    `json:"recorded,omitempty"` // Result.KnownObserved
	Stale       bool      `json:"stale,omitempty"`    // a listed requirement that passed
	Exchange    *Exchange `json:"request,omitempty"`
	Repro       string    `json:"repro,omitempty"`
}

// WriteJSON writes r as one JSON object: "summary" (the counts per
// outcome), "results" (one object per requirement: id, source, section,
// name, text, outcome, durationMs, and where they apply detail, expected,
// actual, knownReason, observed, recorded, stale, request — the last
// request the check sent and what came back — and repro, the shell
// commands that send it again), and "known", "notes" and "error" when set.
func (r Report) WriteJSON(w io.Writer) error {
	t := r.Tally()
	out := jsonReport{Known: r.Known, Notes: r.Notes, Results: make([]jsonResult, 0, len(r.Results)),
		Summary: jsonTally{Passed: t.Passed, Failed: t.Failed, Skipped: t.Skipped, Known: t.Known, Changed: t.Changed, Errored: t.Errored}}
	if r.Err != nil {
		out.Error = r.Err.Error()
	}
	for _, res := range r.Results {
		out.Results = append(out.Results, jsonResult{
			ID: res.Req.ID, Source: string(res.Req.Source), Section: res.Req.Section, Name: res.Req.Name,
			Text: res.Req.Text, Outcome: res.Outcome.String(), DurationMS: float64(res.Duration.Microseconds()) / 1000,
			Detail: res.Detail, Expected: res.Expected, Actual: res.Actual, KnownReason: res.KnownReason,
			Observed: res.Observed, Recorded: res.KnownObserved, Stale: res.Outcome == Pass && res.KnownReason != "",
			Exchange: res.Exchange, Repro: res.Repro,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// The JUnit XML schema as CI systems read it (Jenkins, GitLab, GitHub
// actions that render test reports).
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	junitCounts
	Suites []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	junitCounts
	Cases []junitCase `xml:"testcase"`
}

// junitCounts are the attributes a suite and the file's root both carry.
type junitCounts struct {
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   int    `xml:"errors,attr"`
	Skipped  int    `xml:"skipped,attr"`
	Time     string `xml:"time,attr"`
}

type junitCase struct {
	Classname string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// sectionGroup is the part of a requirement's section that names the
// section of the interface document: its first reference ("§4.3" of
// "§4.3 GET /api/logs, Errors; §7 row 4", "issue 8" of "issue 8 (…)").
func sectionGroup(section string) string {
	s := strings.TrimSpace(section)
	if rest, ok := strings.CutPrefix(s, "issue "); ok {
		n, _, _ := strings.Cut(rest, " ")
		return "issue " + n
	}
	if i := strings.IndexAny(s, " ;,("); i > 0 {
		s = s[:i]
	}
	return s
}

// WriteJUnit writes r as JUnit XML: one testsuite per section of the
// interface document (the first reference of each requirement's Section,
// e.g. "§4.3"), in order of first appearance; one testcase per
// requirement, with classname the section and name "ID name". A FAIL has a
// failure element, an ERROR an error element (message: the detail, or
// "expected …, got …"; text: the requirement, its full section, expected,
// actual, the last request and its reproduction), a SKIP a skipped element with the reason;
// a KNOWN deviation is rendered as skipped ("known deviation of NAME:
// reason"), since it does not fail the run, with the failure in
// system-out; a CHANGED one as a failure (type CHANGED, message "known
// deviation of NAME changed: recorded …, observed …"); a PASS whose entry
// is stale has a system-out saying so.
func (r Report) WriteJUnit(w io.Writer) error {
	t := r.Tally()
	root := junitSuites{Name: "strongbox conformance", junitCounts: junitCounts{Tests: len(r.Results), Failures: t.Failed + t.Changed,
		Errors: t.Errored, Skipped: t.Skipped + t.Known}}
	index := map[string]int{}
	var total float64
	var times []float64 // per suite
	for _, res := range r.Results {
		group := sectionGroup(res.Req.Section)
		i, ok := index[group]
		if !ok {
			i = len(root.Suites)
			index[group] = i
			root.Suites = append(root.Suites, junitSuite{Name: group})
			times = append(times, 0)
		}
		s := &root.Suites[i]
		secs := res.Duration.Seconds()
		total += secs
		c := junitCase{Classname: group, Name: res.Req.ID + " " + res.Req.Name, Time: fmt.Sprintf("%.3f", secs)}
		msg := res.Detail
		if res.Expected != "" || res.Actual != "" {
			msg = "expected " + res.Expected + ", got " + res.Actual
		}
		switch res.Outcome {
		case Fail:
			s.Failures++
			c.Failure = &junitMessage{Message: msg, Type: "FAIL", Text: failureText(res)}
		case Error:
			s.Errors++
			c.Error = &junitMessage{Message: msg, Type: "ERROR", Text: failureText(res)}
		case Skip:
			s.Skipped++
			c.Skipped = &junitMessage{Message: res.Detail}
		case Known:
			s.Skipped++
			c.Skipped = &junitMessage{Message: "known deviation of " + r.Known + ": " + res.KnownReason}
			c.SystemOut = failureText(res)
		case Changed:
			s.Failures++
			c.Failure = &junitMessage{Type: "CHANGED", Text: failureText(res),
				Message: "known deviation of " + r.Known + " changed: recorded " + res.KnownObserved + ", observed " + res.Observed}
		case Pass:
			if res.KnownReason != "" {
				c.SystemOut = "stale: listed as a known deviation of " + r.Known + " (" + res.KnownReason + "), but passed"
			}
		}
		s.Tests++
		s.Cases = append(s.Cases, c)
		times[i] += secs
	}
	for i := range root.Suites {
		root.Suites[i].Time = fmt.Sprintf("%.3f", times[i])
	}
	root.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// failureText is the body of a failure, error or known deviation in JUnit.
func failureText(res Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s [%s]\nrequirement: %s\n", res.Req.ID, res.Req.Source, res.Req.Section, res.Req.Text)
	if res.Expected != "" || res.Actual != "" {
		fmt.Fprintf(&b, "expected: %s\nactual:   %s\n", res.Expected, res.Actual)
	}
	if res.Detail != "" {
		fmt.Fprintf(&b, "detail: %s\n", res.Detail)
	}
	if res.KnownReason != "" {
		fmt.Fprintf(&b, "known: %s\nrecorded: %s\nobserved: %s\n", res.KnownReason, res.KnownObserved, res.Observed)
	}
	if res.Exchange != nil {
		fmt.Fprintf(&b, "request: %s\n", res.Exchange)
	}
	if res.Repro != "" {
		fmt.Fprintf(&b, "reproduce (sh, curl, sed):\n%s\n", res.Repro)
	}
	return b.String()
}

// WriteFile writes what write produces to path atomically: to a temporary
// file in the same directory, synced, then renamed over path, so that a
// reader (a CI step) never sees half a report.
func WriteFile(path string, write func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return fmt.Errorf("conformance: %s: %w", path, err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("conformance: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("conformance: writing %s: %w", path, err)
	}
	return nil
}
