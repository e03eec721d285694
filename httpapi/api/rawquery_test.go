package api

import (
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestQueryRefused: a query string with a pair Go's parser refuses is a
// 400 naming the problem on every route, whoever calls, and the request is
// logged; a query that parses reaches the handler whole.
func TestQueryRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const (
		valueSemi   = "Invalid query string: the value of 'filter' contains a raw ';' (send it as %3B)."
		valueEscape = "Invalid query string: the value of 'filter' has an invalid '%' escape (send '%' as %25)."
		tokenEscape = "Invalid query string: the value of 'token' has an invalid '%' escape (send '%' as %25)."
		nameSemi    = "Invalid query string: a parameter name contains a raw ';' (send it as %3B)."
		nameEscape  = "Invalid query string: a parameter name has an invalid '%' escape (send '%' as %25)."
		tooMany     = "Invalid query string: more than 10000 parameters."
	)
	shapes := []struct{ query, msg string }{
		{"filter=a;b", valueSemi},
		{"filter=id%3D%27x%27&filter=%zz", valueEscape},
		{"page=1&filter=100%", valueEscape},
		{"token=secret%z1", tokenEscape},
		{"a;b=1", nameSemi},
		{"%zz=1", nameEscape},
		{"x" + strings.Repeat("&x", maxQueryParams), tooMany},
	}
	routes := []struct {
		method, path, token string
	}{
		{"GET", "/api/health", ""},
		{"GET", "/api/health", e.su},
		{"GET", "/api/logs", e.su},
		{"GET", "/api/logs/stats", e.su},
		{"GET", "/api/collections", e.su},
		{"GET", "/api/collections/users/records", ""},
		{"POST", "/api/collections/users/records", ""},
		{"GET", "/api/realtime", ""},
		{"GET", "/api/oauth2-redirect", ""},
		{"POST", "/api/collections/users/auth-with-password", ""},
		{"GET", "/api/nope", ""},
	}
	for _, rt := range routes {
		for _, sh := range shapes {
			res := e.doRaw(rt.method, rt.path+"?"+sh.query, rt.token, "", nil)
			if t.Failed() {
				return
			}
			t.Run(rt.method+" "+rt.path+" "+truncate(sh.query, 20), func(t *testing.T) {
				wantError(t, res, 400, sh.msg)
			})
		}
	}
	// Refused requests are logged like any other.
	n := 0
	for _, it := range e.listLogs("data.status = 400") {
		if strings.Contains(it["data"].(map[string]any)["url"].(string), "?") {
			n++
		}
	}
	if want := len(routes) * len(shapes); n != want {
		t.Errorf("%d refused requests logged, want %d", n, want)
	}
	// Queries that parse are read whole: a filter with an escaped ';' and
	// '%' reaches the filter parser (400 for its syntax, not this check).
	res := e.do("GET", "/api/collections/users/records?filter="+url.QueryEscape("email='a;b%'"), e.su, nil)
	if res.Status != 200 {
		t.Errorf("escaped filter: %d %s", res.Status, res.Body)
	}
}

func TestParseQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw  string
		want url.Values
		err  string
	}{
		{"", url.Values{}, ""},
		{"a=1&b=&c&&a=%41+b", url.Values{"a": {"1", "A b"}, "b": {""}, "c": {""}}, ""},
		{"f%69lter=x%3By", url.Values{"filter": {"x;y"}}, ""},
		{"a=1;b=2", nil, "the value of 'a' contains a raw ';'"},
		{"a=%", nil, "the value of 'a' has an invalid '%' escape"},
		{"%=1", nil, "a parameter name has an invalid '%' escape"},
		{";", nil, "a parameter name contains a raw ';'"},
		{"ok=1&" + strings.Repeat("n", 100) + "=%", nil, "the value of '" + strings.Repeat("n", 64) + "...' has"},
		{"a%ffb=%", nil, "the value of 'a\uFFFDb' has"},
		{strings.Repeat("&", maxQueryParams-1), url.Values{}, ""},
		{strings.Repeat("&", maxQueryParams), nil, "more than 10000 parameters"},
	}
	for _, tt := range tests {
		got, err := parseQuery(tt.raw)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseQuery(%.40q) error %v, want one with %q", tt.raw, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseQuery(%.40q) = %v, %v, want %v", tt.raw, got, err, tt.want)
		}
	}
}

// queryErrorTemplates are parseQuery's errors, with the parameter name
// left out.
var queryErrorTemplates = []string{
	"Invalid query string: the value of '' contains a raw ';' (send it as %3B).",
	"Invalid query string: the value of '' has an invalid '%' escape (send '%' as %25).",
	"Invalid query string: a parameter name contains a raw ';' (send it as %3B).",
	"Invalid query string: a parameter name has an invalid '%' escape (send '%' as %25).",
	"Invalid query string: more than 10000 parameters.",
}

// FuzzParseQuery: parseQuery accepts exactly the queries url.ParseQuery
// parses without error, with the same values, and its error shows no more of
// the query than a parameter name.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "a=1&b=2", "a=1;b=2", "a=%zz", "%7A=%41", "a&&=b=c", "x=%e2%82%ac+y", "token=s3cr3t;", " =%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, err := parseQuery(raw)
		want, werr := url.ParseQuery(raw)
		if (err == nil) != (werr == nil) {
			t.Fatalf("parseQuery(%q) error %v, url.ParseQuery's %v", raw, err, werr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("parseQuery(%q) = %v, url.ParseQuery %v", raw, got, want)
		}
		if err != nil {
			// Only a name is shown: the message is a template around it.
			if !slices.ContainsFunc(queryErrorTemplates, func(tmpl string) bool {
				pre, post, _ := strings.Cut(tmpl, "''")
				return strings.HasPrefix(err.Error(), pre) && strings.HasSuffix(err.Error(), post)
			}) {
				t.Fatalf("parseQuery(%q): error %q", raw, err)
			}
		}
	})
}

// TestHandlersReadCheckedQuery: no handler reads the query string through
// r.URL.Query(), which drops the pairs it cannot parse; they use query(r).
func TestHandlersReadCheckedQuery(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "rawquery.go" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "URL.Query()") {
			t.Errorf("%s reads r.URL.Query(); use query(r)", f)
		}
	}
}
