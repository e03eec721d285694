package conformance

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// documentSections are the sections of the interface document a Section
// may cite: its nine parts, the subsections of §2 and §4, and the rules of
// §3 and §5 (cited as §3.N and §5.N).
var documentSections = func() map[string]bool {
	m := map[string]bool{}
	add := func(prefix string, n int) {
		for i := 1; i <= n; i++ {
			m[prefix+strconv.Itoa(i)] = true
		}
	}
	add("§", 9)
	add("§2.", 8)
	add("§3.", 3)
	add("§4.", 5)
	add("§5.", 11)
	return m
}()

var reSectionCite = regexp.MustCompile(`§\d+(\.\d+)?`)

// TestRequirementSources requires every requirement to name a known source,
// and its Section to say where the rule comes from: a document requirement
// starts with a § of the interface document (and cites only sections the
// document has), a pocketbase requirement names the reference, and a
// strongbox requirement names the issue or the promise.
func TestRequirementSources(t *testing.T) {
	for _, r := range Requirements {
		switch r.Source {
		case SourceDocument:
			if !strings.HasPrefix(r.Section, "§") {
				t.Errorf("%s: a document requirement whose Section %q does not start with a § of the document", r.ID, r.Section)
			}
			// What follows "reference" cites the reference's own sections.
			own, _, _ := strings.Cut(r.Section, "reference")
			for _, cite := range reSectionCite.FindAllString(own, -1) {
				if !documentSections[cite] {
					t.Errorf("%s: Section %q cites %s, which the interface document does not have", r.ID, r.Section, cite)
				}
			}
		case SourcePocketBase:
			if !strings.Contains(r.Section, "reference") {
				t.Errorf("%s: a pocketbase requirement whose Section %q does not name the reference", r.ID, r.Section)
			}
		case SourceStrongbox:
			if !strings.Contains(r.Section, "issue") && !strings.Contains(r.Section, "strongbox") {
				t.Errorf("%s: a strongbox requirement whose Section %q names neither the issue nor the promise", r.ID, r.Section)
			}
		default:
			t.Errorf("%s: Source %q, want document, pocketbase or strongbox", r.ID, r.Source)
		}
	}
}
