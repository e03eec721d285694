package conformance

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The README's block on PocketBase lies between these two lines.
const (
	readmeBegin = "<!-- Generated from conformance/known/*.tsv by `go test ./conformance -run TestREADMEPocketBase -update`. Do not edit. -->"
	readmeEnd   = "<!-- end of the generated block -->"
)

// pocketBaseBlock renders the README's block on PocketBase from the table
// and the known lists of pocketBases: the count of requirements per
// profile, what each version passes with its list applied (its
// requirements less the listed ones: TestAgainstPocketBase holds every
// other one to PASS; an Intermittent entry passes in some runs and is
// named apart), and a table of the requirements whose entry differs
// between the versions (listed in one and not another, or with another
// observation), in table order.
func pocketBaseBlock(reqs []*Requirement, lists []*KnownList) string {
	var b strings.Builder
	b.WriteString(readmeBegin + "\n")
	profiles := []Source{SourceDocument, SourcePocketBase, SourceStrongbox}
	count := func(p Source, l *KnownList) (all, known int) {
		for _, r := range reqs {
			if p.includes(r.Source) {
				all++
				if _, ok := l.Reasons[r.ID]; ok && l.Observed[r.ID] != Intermittent {
					known++
				}
			}
		}
		return all, known
	}
	empty := &KnownList{}
	var perProfile []string
	for _, p := range profiles {
		n, _ := count(p, empty)
		perProfile = append(perProfile, fmt.Sprintf("%s %d", p, n))
	}
	fmt.Fprintf(&b, "The suite has %d requirements (per profile: %s). With its list of known deviations applied, "+
		"PocketBase passes every other one of the document and pocketbase profiles:", len(reqs), strings.Join(perProfile, ", "))
	version := func(l *KnownList) string { return "v" + strings.TrimPrefix(l.Name, "pocketbase-") }
	for i, l := range lists {
		sep := ","
		if i == len(lists)-1 {
			sep = "."
		}
		var parts []string
		for _, p := range profiles[:2] {
			n, k := count(p, l)
			parts = append(parts, fmt.Sprintf("%s %d passed, %d known", p, n-k, k))
		}
		fmt.Fprintf(&b, " %s (%s)%s", version(l), strings.Join(parts, "; "), sep)
	}
	var races []string
	for _, r := range reqs {
		var in []string
		for _, l := range lists {
			if l.Observed[r.ID] == Intermittent {
				in = append(in, version(l))
			}
		}
		if len(in) > 0 {
			races = append(races, fmt.Sprintf("%s (%s)", r.ID, strings.Join(in, ", ")))
		}
	}
	if len(races) > 0 {
		fmt.Fprintf(&b, " In some runs a race makes %s KNOWN instead (listed `%s`).", strings.Join(races, ", "), Intermittent)
	}
	b.WriteString(" The entries that differ between the lists (`passes`: not listed):\n\n| requirement |")
	for _, l := range lists {
		b.WriteString(" " + version(l) + " |")
	}
	b.WriteString("\n|---" + strings.Repeat("|---", len(lists)) + "|\n")
	cell := func(l *KnownList, id string) string {
		if _, ok := l.Reasons[id]; !ok {
			return "passes"
		}
		return "`" + strings.ReplaceAll(l.Observed[id], "|", `\|`) + "`"
	}
	for _, r := range reqs {
		row := make([]string, len(lists))
		same := true
		for i, l := range lists {
			row[i] = cell(l, r.ID)
			same = same && row[i] == row[0]
		}
		if !same {
			fmt.Fprintf(&b, "| %s | %s |\n", r.ID, strings.Join(row, " | "))
		}
	}
	b.WriteString(readmeEnd + "\n")
	return b.String()
}

// TestREADMEPocketBase keeps the README's block on PocketBase (counts and
// the table of what changed between the versions of pocketBases) as
// pocketBaseBlock renders it from the table and the lists; with -update
// it rewrites the block.
func TestREADMEPocketBase(t *testing.T) {
	var lists []*KnownList
	for _, pb := range pocketBases {
		l, err := LoadKnown("pocketbase-" + pb.version)
		if err != nil {
			t.Fatal(err)
		}
		lists = append(lists, l)
	}
	want := pocketBaseBlock(Requirements, lists)
	const path = "../README.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	i, j := strings.Index(readme, readmeBegin), strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no block between %q and %q", readmeBegin, readmeEnd)
	}
	got := readme[i : j+len(readmeEnd)+1]
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i]+want+readme[j+len(readmeEnd)+1:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's block on PocketBase is stale (go test ./conformance -run TestREADMEPocketBase -update):\n%s\nwant:\n%s", got, want)
}
