package conformance

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Known deviations are data, not code: conformance/known/NAME.tsv lists,
// for the implementation NAME, the requirements it is known to fail, why,
// and what the suite observed when the entry was recorded, one per line as
// "ID<TAB>reason<TAB>observation" ('#' starts a comment line; blank lines
// are ignored; a line of two columns, an older list's, matches by ID
// alone; an observation of "sometimes" marks a deviation that shows only
// in some runs, a race, which any failure matches and a pass does not make
// stale). The files are embedded, so the binary carries them; Config.Known
// names one (or the path of a file of one's own, in the same format). A
// listed requirement that fails as recorded is reported Known with its
// reason; one that fails otherwise is reported Changed, which fails the
// run; one that passes is reported as a note, so that a stale entry is
// noticed. RecordKnown writes a list from runs, so that observations are
// never typed by hand.

//go:embed known/*.tsv
var knownFS embed.FS

// KnownList is the list of known deviations of one implementation.
type KnownList struct {
	Name    string            // the implementation, e.g. "pocketbase-0.31.0"
	Reasons map[string]string // requirement ID → reason
	// Observed maps a requirement ID to the observation recorded with its
	// entry ("" for a line with none, which matches any failure;
	// Intermittent for a deviation seen in some runs only).
	Observed map[string]string
	IDs      []string // the IDs in file order
}

// KnownImplementations returns the names of the embedded lists, sorted.
func KnownImplementations() []string {
	entries, _ := fs.ReadDir(knownFS, "known")
	var names []string
	for _, e := range entries {
		if n, ok := strings.CutSuffix(e.Name(), ".tsv"); ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names
}

// LoadKnown returns the list named name: an embedded one (see
// KnownImplementations), or, when name contains a slash or ends in .tsv,
// the file at that path.
func LoadKnown(name string) (*KnownList, error) {
	var data []byte
	var err error
	if strings.ContainsAny(name, `/\`) || strings.HasSuffix(name, ".tsv") {
		data, err = os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("conformance: known deviations: %w", err)
		}
		name = strings.TrimSuffix(path.Base(strings.ReplaceAll(name, `\`, "/")), ".tsv")
	} else {
		data, err = knownFS.ReadFile("known/" + name + ".tsv")
		if err != nil {
			return nil, fmt.Errorf("conformance: no known deviations for implementation %q (known: %s; or give the path of a .tsv file)",
				name, strings.Join(KnownImplementations(), ", "))
		}
	}
	return parseKnown(name, data)
}

// parseKnown parses the "ID<TAB>reason[<TAB>observation]" lines of a
// known-deviations file.
func parseKnown(name string, data []byte) (*KnownList, error) {
	l := &KnownList{Name: name, Reasons: map[string]string{}, Observed: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, ok := strings.Cut(line, "\t")
		reason, observed, _ := strings.Cut(reason, "\t")
		id, reason, observed = strings.TrimSpace(id), strings.TrimSpace(reason), strings.TrimSpace(observed)
		switch {
		case !ok || id == "" || reason == "" || strings.Contains(observed, "\t"):
			return nil, fmt.Errorf("conformance: known deviations %s:%d: want ID<TAB>reason<TAB>observation, got %q", name, n, line)
		case l.Reasons[id] != "":
			return nil, fmt.Errorf("conformance: known deviations %s:%d: %s listed twice", name, n, id)
		}
		l.Reasons[id] = reason
		l.Observed[id] = observed
		l.IDs = append(l.IDs, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("conformance: known deviations %s: %w", name, err)
	}
	return l, nil
}

// applyKnown marks the failures l lists as Known, or as Changed when the
// entry records another observation than the run's, and notes the stale
// entries: a listed requirement that passed, and an ID that is no
// requirement of table.
func (r *Report) applyKnown(l *KnownList, table []*Requirement) {
	if l == nil {
		return
	}
	for i := range r.Results {
		res := &r.Results[i]
		reason, ok := l.Reasons[res.Req.ID]
		if !ok {
			continue
		}
		res.KnownReason, res.KnownObserved = reason, l.Observed[res.Req.ID]
		switch {
		case res.Outcome == Fail:
			res.Outcome = Known
			if obs := res.KnownObserved; obs != "" && obs != Intermittent && obs != res.Observed {
				res.Outcome = Changed
			}
		case res.Outcome == Pass && res.KnownObserved == Intermittent:
			res.KnownReason, res.KnownObserved = "", ""
		case res.Outcome == Pass:
			r.Notes = append(r.Notes, fmt.Sprintf("%s passed but is listed as a known deviation of %s (%s): the entry is stale; remove it if the implementation changed",
				res.Req.ID, l.Name, reason))
		}
	}
	ids := make(map[string]bool, len(table))
	for _, req := range table {
		ids[req.ID] = true
	}
	for _, id := range l.IDs {
		if !ids[id] {
			r.Notes = append(r.Notes, fmt.Sprintf("%s lists %s, which is no requirement of the suite", l.Name, id))
		}
	}
}

// printKnown writes, under a KNOWN or CHANGED line of Report.Print, the
// entry's reason and what it recorded against what the run observed.
func printKnown(w io.Writer, res Result, pad string) {
	if res.Outcome != Known && res.Outcome != Changed {
		return
	}
	fmt.Fprintf(w, pad+"known:    %s\n", indent(res.KnownReason, pad))
	if res.Outcome == Changed {
		fmt.Fprintf(w, pad+"recorded: %s\n", res.KnownObserved)
	}
	fmt.Fprintf(w, pad+"observed: %s\n", res.Observed)
}

// Intermittent is the observation of an entry whose deviation shows in
// some runs only (a race in the server): any failure of it is Known, and
// its passing is no stale entry. RecordKnown leaves such an entry as it is.
const Intermittent = "sometimes"

// placeholderReason is the reason RecordKnown gives a new entry; a list
// holding it is not finished (TestKnownListsExist refuses it).
const placeholderReason = "TODO: say why (read the implementation)"

// RecordKnown returns the known-deviations list old (the bytes of a .tsv
// file, or nil for a new one) brought up to date with the reports of runs
// against the same implementation: every entry whose requirement failed
// gets that run's observation (its reason and the comments are kept), an
// entry whose requirement passed is dropped, one whose requirement did
// not run, was skipped or errored stays as it is, as does an Intermittent
// one, and a failure old does not list is appended with a placeholder
// reason to be written by hand.
// When reports disagree on an observation, the first wins.
func RecordKnown(old []byte, reports ...Report) []byte {
	observed := map[string]string{}
	passed := map[string]bool{}
	var order []string
	for _, rep := range reports {
		for _, res := range rep.Results {
			id := res.Req.ID
			switch res.Outcome {
			case Fail, Known, Changed:
				if _, seen := observed[id]; !seen {
					observed[id] = res.Observed
					order = append(order, id)
				}
			case Pass:
				passed[id] = true
			}
		}
	}
	var b bytes.Buffer
	listed := map[string]bool{}
	for line := range strings.Lines(string(old)) {
		t := strings.TrimSpace(line)
		id, rest, ok := strings.Cut(t, "\t")
		if t == "" || strings.HasPrefix(t, "#") || !ok {
			b.WriteString(strings.TrimRight(line, "\r\n") + "\n")
			continue
		}
		reason, was, _ := strings.Cut(rest, "\t")
		id = strings.TrimSpace(id)
		listed[id] = true
		if strings.TrimSpace(was) == Intermittent {
			b.WriteString(strings.TrimRight(line, "\r\n") + "\n")
		} else if obs, ok := observed[id]; ok {
			fmt.Fprintf(&b, "%s\t%s\t%s\n", id, strings.TrimSpace(reason), obs)
		} else if !passed[id] {
			b.WriteString(strings.TrimRight(line, "\r\n") + "\n")
		}
	}
	first := true
	for _, id := range order {
		if listed[id] {
			continue
		}
		if first {
			b.WriteString("\n# Recorded by the suite: write each reason.\n")
			first = false
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", id, placeholderReason, observed[id])
	}
	return b.Bytes()
}
