package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"unicode/utf8"
)

// Report holds the results of one run, in requirement table order.
type Report struct {
	Results []Result
	// Err is set when the configuration made the run impossible (see
	// Config.Validate); nothing ran then.
	Err error
	// Known is Config.Known, the implementation whose known deviations
	// were applied ("" for none).
	Known string
	// Notes are remarks on the known deviations (an entry whose
	// requirement passed, an entry naming no requirement) and on the
	// run's throwaway superuser (it could not be made, or deleted). They
	// do not make the run fail.
	Notes []string
}

// Tally counts a report's results per outcome.
type Tally struct {
	Passed, Failed, Skipped, Errored, Known, Changed int
}

// Tally counts the results per outcome; the six numbers add up to
// len(r.Results).
func (r Report) Tally() Tally {
	var t Tally
	for _, res := range r.Results {
		switch res.Outcome {
		case Pass:
			t.Passed++
		case Fail:
			t.Failed++
		case Skip:
			t.Skipped++
		case Known:
			t.Known++
		case Changed:
			t.Changed++
		default:
			t.Errored++
		}
	}
	return t
}

// Counts returns how many requirements passed, failed, were skipped and
// errored. Known deviations are in none of the four (see Tally).
func (r Report) Counts() (passed, failed, skipped, errored int) {
	t := r.Tally()
	return t.Passed, t.Failed, t.Skipped, t.Errored
}

// OK reports whether the run is a success: it ran, nothing failed,
// nothing errored and no known deviation changed (a Known deviation does
// not count against it). A command wrapping the suite exits non-zero when
// it is false.
func (r Report) OK() bool {
	t := r.Tally()
	return r.Err == nil && t.Failed == 0 && t.Errored == 0 && t.Changed == 0
}

// String is the closing line of Print: "N passed, N failed, N skipped",
// followed by ", N known", ", N changed" and ", N errored" when there are
// any.
func (t Tally) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", t.Passed, t.Failed, t.Skipped)
	if t.Known > 0 {
		s += fmt.Sprintf(", %d known", t.Known)
	}
	if t.Changed > 0 {
		s += fmt.Sprintf(", %d changed", t.Changed)
	}
	if t.Errored > 0 {
		s += fmt.Sprintf(", %d errored", t.Errored)
	}
	return s
}

// Print writes one line per requirement,
//
//	OUTCOME ID SOURCE SECTION: NAME
//
// (the source as the requirement gives it), and below a line that is not
// PASS what explains it, indented:
//
//   - FAIL, KNOWN and CHANGED: the requirement's text, the check's detail
//     when it says more than the expectation, "expected:" and "actual:",
//     the last request the check sent and what came back ("request:"),
//     and the commands that send it again ("reproduce", Result.Repro);
//     KNOWN adds the reason the list of known deviations gives ("known:")
//     and the observation ("observed:"), CHANGED also the one the entry
//     recorded ("recorded:");
//   - ERROR: the requirement's text, what went wrong, the last request and
//     its reproduction;
//   - SKIP: the reason.
//
// Then the notes on known deviations ("note: …"), and last the line of
// counts, "N passed, N failed, N skipped" (see Tally.String).
func (r Report) Print(w io.Writer) {
	if r.Err != nil {
		fmt.Fprintf(w, "error: %v\n", r.Err)
	}
	const pad = "      "
	for _, res := range r.Results {
		fmt.Fprintf(w, "%-5s %-19s %-10s %s: %s\n", res.Outcome, res.Req.ID, res.Req.Source, res.Req.Section, res.Req.Name)
		switch res.Outcome {
		case Fail, Error, Known, Changed:
			fmt.Fprintf(w, pad+"requirement: %s\n", indent(res.Req.Text, pad))
			printKnown(w, res, pad)
			if res.Expected != "" || res.Actual != "" {
				if res.Detail != "expected "+res.Expected+", got "+res.Actual {
					fmt.Fprintf(w, pad+"%s\n", indent(res.Detail, pad))
				}
				fmt.Fprintf(w, pad+"expected: %s\n", indent(res.Expected, pad))
				fmt.Fprintf(w, pad+"actual:   %s\n", indent(res.Actual, pad))
			} else {
				fmt.Fprintf(w, pad+"%s\n", indent(res.Detail, pad))
			}
			if res.Exchange != nil {
				fmt.Fprintf(w, pad+"request:  %s\n", res.Exchange)
			}
			if res.Repro != "" {
				fmt.Fprintf(w, pad+"reproduce (sh, curl, sed):\n%s\n", indent(reproPad+res.Repro, reproPad))
			}
		case Skip:
			fmt.Fprintf(w, pad+"skipped: %s\n", indent(res.Detail, pad))
		}
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w, r.Tally())
}

// reproPad indents the lines of a reproduction under "reproduce", so that
// they can be copied into a shell as they are.
const reproPad = "        "

// indent prefixes every line after the first with pad, so that multi-line
// details stay under their result line.
func indent(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}

// bodyText is how a report shows a body: text with its runs of white space
// made one space and cut after max bytes ("…" marks the cut), and anything
// else (a zip archive, bytes that are not UTF-8, control characters) as its
// length and first bytes in hex, so that no raw binary reaches a terminal
// or a CI log.
func bodyText(body []byte, max int) string {
	if !isText(body) {
		n := min(len(body), 8)
		more := ""
		if len(body) > n {
			more = " …"
		}
		return fmt.Sprintf("<%d bytes, not text: % x%s>", len(body), body[:n], more)
	}
	b := strings.Join(strings.Fields(string(body)), " ")
	if len(b) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		b = b[:cut] + "…"
	}
	return b
}

// isText reports whether b is UTF-8 without control characters but white
// space.
func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return false
		}
	}
	return true
}

// redactPath hides the value of a token query parameter (a file token the
// suite obtained), so that reports and CI logs hold no credential.
func redactPath(path string) string {
	p, q, ok := strings.Cut(path, "?")
	if !ok {
		return path
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return path
	}
	changed := false
	for k := range vals {
		if strings.EqualFold(k, "token") {
			for i := range vals[k] {
				vals[k][i] = "REDACTED"
			}
			changed = true
		}
	}
	if !changed {
		return path
	}
	return p + "?" + vals.Encode()
}

// redactToken hides the value of the token of a JSON answer (a sign-in, a
// refresh, a file token), so that reports hold no token the server issued.
func redactToken(body []byte) []byte {
	var out struct {
		Token string `json:"token"`
	}
	if json.Unmarshal(body, &out) != nil || len(out.Token) < 8 {
		return body
	}
	return bytes.ReplaceAll(body, []byte(out.Token), []byte("REDACTED"))
}
