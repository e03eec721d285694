package conformance

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// Report holds the results of one run, in requirement table order.
type Report struct {
	Results []Result
}

// Counts returns how many requirements passed, failed, were skipped and
// errored. The four numbers always add up to len(r.Results).
func (r Report) Counts() (passed, failed, skipped, errored int) {
	for _, res := range r.Results {
		switch res.Outcome {
		case Pass:
			passed++
		case Fail:
			failed++
		case Skip:
			skipped++
		default:
			errored++
		}
	}
	return
}

// OK reports whether the run is a success: nothing failed and nothing
// errored. A command wrapping the suite exits non-zero when it is false.
func (r Report) OK() bool {
	_, failed, _, errored := r.Counts()
	return failed == 0 && errored == 0
}

// Print writes one line per requirement: outcome, ID, name, section and
// duration. Below a FAIL or ERROR line it writes the requirement text and the
// detail; a failure reported with [Mismatch] gets an "expected:" and an
// "actual:" line (and its detail only when the check added context). Below
// a SKIP line it writes the reason. When anything was skipped or errored a line with those counts
// follows, and the last line is always exactly "N passed, N failed" (errors
// are not in that line's count, but they make OK false).
func (r Report) Print(w io.Writer) {
	for _, res := range r.Results {
		fmt.Fprintf(w, "%-5s %-16s %s  [%s] (%s)\n", res.Outcome, res.Req.ID,
			res.Req.Name, res.Req.Section, res.Duration.Round(time.Millisecond))
		switch res.Outcome {
		case Fail, Error:
			fmt.Fprintf(w, "      requirement: %s\n", res.Req.Text)
			if res.Expected != "" || res.Actual != "" {
				if res.Detail != "expected "+res.Expected+", got "+res.Actual {
					fmt.Fprintf(w, "      %s\n", indent(res.Detail, "      "))
				}
				fmt.Fprintf(w, "      expected: %s\n", indent(res.Expected, "      "))
				fmt.Fprintf(w, "      actual:   %s\n", indent(res.Actual, "      "))
				break
			}
			fmt.Fprintf(w, "      %s\n", indent(res.Detail, "      "))
		case Skip:
			fmt.Fprintf(w, "      skipped: %s\n", indent(res.Detail, "      "))
		}
	}
	passed, failed, skipped, errored := r.Counts()
	if skipped > 0 || errored > 0 {
		fmt.Fprintf(w, "%d skipped, %d errored (errors are harness problems, reported apart from failures)\n",
			skipped, errored)
	}
	fmt.Fprintf(w, "%d passed, %d failed\n", passed, failed)
}

// indent prefixes every line after the first with pad, so that multi-line
// details stay under their result line.
func indent(s, pad string) string {
	s = strings.TrimRight(s, "\n")
	return strings.ReplaceAll(s, "\n", "\n"+pad)
}
