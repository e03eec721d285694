package conformance

import (
	"bufio"
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// Known deviations are data, not code: conformance/known/NAME.tsv lists,
// for the implementation NAME, the requirements it is known to fail and
// why, one per line as "ID<TAB>reason" ('#' starts a comment line; blank
// lines are ignored). The files are embedded, so the binary carries them;
// Config.Known names one (or the path of a file of one's own, in the same
// format). A listed requirement that fails is reported Known with its
// reason; one that passes is reported as a note, so that a stale entry is
// noticed.

//go:embed known/*.tsv
var knownFS embed.FS

// KnownList is the list of known deviations of one implementation.
type KnownList struct {
	Name    string            // the implementation, e.g. "pocketbase-0.31.0"
	Reasons map[string]string // requirement ID → reason
	IDs     []string          // the IDs in file order
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

// parseKnown parses the "ID<TAB>reason" lines of a known-deviations file.
func parseKnown(name string, data []byte) (*KnownList, error) {
	l := &KnownList{Name: name, Reasons: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, reason, ok := strings.Cut(line, "\t")
		id, reason = strings.TrimSpace(id), strings.TrimSpace(reason)
		switch {
		case !ok || id == "" || reason == "":
			return nil, fmt.Errorf("conformance: known deviations %s:%d: want ID<TAB>reason, got %q", name, n, line)
		case l.Reasons[id] != "":
			return nil, fmt.Errorf("conformance: known deviations %s:%d: %s listed twice", name, n, id)
		}
		l.Reasons[id] = reason
		l.IDs = append(l.IDs, id)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("conformance: known deviations %s: %w", name, err)
	}
	return l, nil
}

// applyKnown marks the failures l lists as Known and notes the stale
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
		res.KnownReason = reason
		switch res.Outcome {
		case Fail:
			res.Outcome = Known
		case Pass:
			r.Notes = append(r.Notes, fmt.Sprintf("%s passed but is listed as a known deviation of %s (%s): remove the entry if the implementation changed",
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
