package dashboard

import (
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// TestAssetsAllowedByCSP is a cheap static check that the CSP will not
// break the app and that data is never rendered as HTML: no asset builds
// HTML from strings or evaluates code, and index.html has no inline script
// or style.
func TestAssetsAllowedByCSP(t *testing.T) {
	forbidden := []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "javascript:", "'style'", `"style"`, "http://", "https://"}
	for _, name := range Names() {
		body := strings.ReplaceAll(string(assets()[name].plain), "'http://www.w3.org/2000/svg'", "") // the SVG namespace (logs.js)
		for _, bad := range forbidden {
			if name == "favicon.svg" && bad == "http://" {
				continue // the SVG namespace
			}
			if strings.Contains(body, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
	}
	index := string(assets()["index.html"].plain)
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`(?is)<script\b[^>]*>\s*[^<\s]`), // an inline script body
		regexp.MustCompile(`(?i)\sstyle\s*=`),
		regexp.MustCompile(`(?i)<style\b`),
		regexp.MustCompile(`(?i)\son[a-z]+\s*=`),
	} {
		if m := re.FindString(index); m != "" {
			t.Errorf("index.html has %q, which the CSP forbids", m)
		}
	}
	for _, tag := range regexp.MustCompile(`(?i)<script\b[^>]*>`).FindAllString(index, -1) {
		if !strings.Contains(tag, " src=") {
			t.Errorf("index.html has the inline script %q", tag)
		}
	}
}

// TestServedFiles checks the embedded set against ui/ on disk: every file
// of a type the app serves is served, and no unit test (*.test.mjs) nor
// package.json is embedded at all.
func TestServedFiles(t *testing.T) {
	entries, err := os.ReadDir("ui")
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, name := range Names() {
		served[name] = true
	}
	tests := 0 // the unit tests found
	for _, e := range entries {
		name := e.Name()
		_, statErr := fs.Stat(files, "ui/"+name)
		embedded := statErr == nil
		switch {
		case strings.HasSuffix(name, ".test.mjs") || name == "package.json":
			if name != "package.json" {
				tests++
			}
			if embedded || served[name] {
				t.Errorf("%s is embedded (served %v), want it left out", name, served[name])
			}
		case types[path.Ext(name)] != "" && !served[name]:
			t.Errorf("%s is not served", name)
		}
	}
	if tests == 0 {
		t.Error("no unit test (*.test.mjs) in ui/ to check")
	}
}

// TestReferencesExist checks that every file index.html and the modules
// refer to is one the handler serves.
func TestReferencesExist(t *testing.T) {
	refs := regexp.MustCompile(`(?:href|src)="([^"#:]+)"|from '\./([^']+)'`)
	for _, name := range Names() {
		for _, m := range refs.FindAllStringSubmatch(string(assets()[name].plain), -1) {
			ref := m[1] + m[2]
			if _, ok := assets()[ref]; !ok {
				t.Errorf("%s refers to %q, which is not served", name, ref)
			}
		}
	}
}

// TestLoginPageWeight: the sign-in screen loads every file (index.html,
// its stylesheet and icon, the modules); compressed, they must stay far
// under the 200 KB budget.
func TestLoginPageWeight(t *testing.T) {
	total, plain := 0, 0
	for _, name := range Names() {
		total += len(assets()[name].gz)
		plain += len(assets()[name].plain)
	}
	t.Logf("login page: %d files, %d bytes gzip'd (%d plain)", len(Names()), total, plain)
	if total > 200_000 {
		t.Errorf("login page weighs %d bytes gzip'd, over 200 KB", total)
	}
}

func TestAcceptsGzip(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{""}, false},
		{[]string{"gzip"}, true},
		{[]string{"gzip, deflate, br"}, true},
		{[]string{"br", "GZIP"}, true},
		{[]string{"deflate, gzip;q=0.5"}, true},
		{[]string{"gzip;q=0"}, false},
		{[]string{"gzip; q=0.0"}, false},
		{[]string{"identity"}, false},
		{[]string{"*"}, true},
		{[]string{"br, *;q=0"}, false},
		{[]string{"x-gzip"}, true},
	} {
		if got := acceptsGzip(tc.header); got != tc.want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestMatches(t *testing.T) {
	const tag = `"abc"`
	for _, tc := range []struct {
		header []string
		want   bool
	}{
		{nil, false},
		{[]string{`"abc"`}, true},
		{[]string{`W/"abc"`}, true},
		{[]string{`"x", "abc"`}, true},
		{[]string{`"x"`, `"abc"`}, true},
		{[]string{`*`}, true},
		{[]string{`"abcd"`}, false},
		{[]string{`abc`}, false},
	} {
		if got := matches(tc.header, tag); got != tc.want {
			t.Errorf("matches(%q) = %v, want %v", tc.header, got, tc.want)
		}
	}
}
