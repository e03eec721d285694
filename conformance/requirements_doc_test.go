package conformance

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// requirementsDoc renders REQUIREMENTS.md from the table: the counts per
// source and per section, then one table per section of the interface
// document (§1 first, the issues' own sections last; within one, the
// order the suite runs them) with each requirement's ID,
// source, section and text. A requirement with no source yet counts as
// document.
func requirementsDoc(reqs []*Requirement) string {
	type group struct {
		name  string
		reqs  []*Requirement
		count map[Source]int
	}
	var groups []*group
	index := map[string]*group{}
	total := map[Source]int{}
	for _, r := range reqs {
		name := sectionGroup(r.Section)
		g := index[name]
		if g == nil {
			g = &group{name: name, count: map[Source]int{}}
			index[name] = g
			groups = append(groups, g)
		}
		src := r.Source
		if src == "" {
			src = SourceDocument
		}
		g.reqs = append(g.reqs, r)
		g.count[src]++
		total[src]++
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return compareSections(a.name, b.name) })
	cell := func(s string) string {
		s = strings.Join(strings.Fields(s), " ")
		return strings.ReplaceAll(s, "|", `\|`)
	}
	var b strings.Builder
	b.WriteString("# What the conformance suite checks\n\n")
	b.WriteString("<!-- Generated from the requirement table by `go test ./conformance -run TestRequirementsDoc -update`. Do not edit. -->\n\n")
	b.WriteString("Every requirement of the suite (`conformance/requirements.go` and the files it names), in the\n" +
		"order it runs: its stable ID, its source (`document`: the interface document states it;\n" +
		"`pocketbase`: the document is silent and the check follows PocketBase v0.31.0; `strongbox`:\n" +
		"strongbox's own promise beyond both), the section of the interface document it verifies, and\n" +
		"what is checked. `strongbox conformance --run REGEXP` runs those whose ID matches.\n\n")
	b.WriteString("Not checked here, because a black-box client of the API cannot see it: strongbox's\n" +
		"export of every stored log over OTLP/HTTP (issue 32: delivery at least once from a durable\n" +
		"cursor, across kill -9 and a receiver's outage) happens between the server and the user's log\n" +
		"engine. Package `logstore/otlp`'s tests and the root `TestExportVictoriaLogs` (against a real\n" +
		"VictoriaLogs) check it.\n\n")
	fmt.Fprintf(&b, "%d requirements: %d document, %d pocketbase, %d strongbox.\n\n",
		len(reqs), total[SourceDocument], total[SourcePocketBase], total[SourceStrongbox])
	b.WriteString("| section | requirements | document | pocketbase | strongbox |\n|---|---:|---:|---:|---:|\n")
	for _, g := range groups {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", cell(g.name), len(g.reqs),
			g.count[SourceDocument], g.count[SourcePocketBase], g.count[SourceStrongbox])
	}
	b.WriteString(beyondReach)
	for _, g := range groups {
		fmt.Fprintf(&b, "\n## %s\n\n| ID | source | section | what is checked |\n|---|---|---|---|\n", g.name)
		for _, r := range g.reqs {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.ID, cell(string(r.Source)), cell(r.Section), cell(r.Text))
		}
	}
	return b.String()
}

// beyondReach is what strongbox promises that the suite, which knows a
// server only by its API's base URL, cannot check (see doc.go).
const beyondReach = "\nBeyond the suite's reach: the Prometheus metrics of issue 32 (`GET /metrics` on the\n" +
	"separate listener `STRONGBOX_METRICS_ADDR` opens, off by default) are not on the API's address,\n" +
	"so no requirement checks them; strongbox's own tests do (`go doc strongbox/httpapi/metrics`),\n" +
	"with promtool and a real Prometheus.\n"

// compareSections orders section groups: "§1" < "§2.5" < "§4.10" <
// "issue 4" < "issue 8".
func compareSections(a, b string) int {
	key := func(s string) []int {
		if n, ok := strings.CutPrefix(s, "issue "); ok {
			i, _ := strconv.Atoi(n)
			return []int{1 << 20, i}
		}
		var k []int
		for _, p := range strings.Split(strings.TrimPrefix(s, "§"), ".") {
			i, _ := strconv.Atoi(p)
			k = append(k, i)
		}
		return k
	}
	return slices.Compare(key(a), key(b))
}

// TestRequirementsDoc fails when REQUIREMENTS.md is not what the table
// generates (run with -update to regenerate it).
func TestRequirementsDoc(t *testing.T) {
	const path = "REQUIREMENTS.md"
	want := requirementsDoc(Requirements)
	if *update {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./conformance -run TestRequirementsDoc -update to create it)", err)
	}
	if string(got) != want {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s is stale (run go test ./conformance -run TestRequirementsDoc -update); first difference at line %d:\n have %q\n want %q",
					path, i+1, g, w)
			}
		}
	}
}
