package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"strongbox/httpapi/settings"
)

// refShape is jsonShape's count for a valid JSON document, computed from
// the decoder's tokens: each object or array counts one, plus one per
// element after its first (the commas), and its depth.
func refShape(t *testing.T, data []byte) (values, depth int) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	type frame struct {
		object bool
		tokens int
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return values, depth
		}
		if err != nil {
			t.Fatalf("refShape(%q): %v", data, err)
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n := f.tokens
			if f.object {
				n /= 2
			}
			if n > 0 {
				values += n - 1
			}
			continue
		}
		if len(stack) > 0 {
			stack[len(stack)-1].tokens++
		}
		if d, ok := tok.(json.Delim); ok && (d == '{' || d == '[') {
			values++
			stack = append(stack, frame{object: d == '{'})
			depth = max(depth, len(stack))
		}
	}
}

func FuzzJSONShape(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":[1,2,{"b":"c,d{["}],"e":null}`, `"\"{,"`, `[[[[]]]]`, `{"a":"\\"}`,
		`{"email":"x","pad":[{},{},{}]}`, `[1,[2,[3]],{"x":{"y":[]}}]`, `  {"a" : [ 1 , 2 ] }  `,
		`{"a":1,"a":2}`, `"\u0022,"`, `{"a":"\\\"","b":[,]`, `}}}]]]`, `"unterminated`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		values, depth := jsonShape(data, math.MaxInt, math.MaxInt)
		// With limits, the scan stops past one of them, and only then.
		lv, ld := jsonShape(data, 3, 2)
		if (lv > 3 || ld > 2) != (values > 3 || depth > 2) {
			t.Fatalf("jsonShape(%q) with limits 3, 2 = %d, %d; without = %d, %d", data, lv, ld, values, depth)
		}
		if !json.Valid(data) {
			return
		}
		rv, rd := refShape(t, data)
		if values != rv || depth != rd {
			t.Fatalf("jsonShape(%q) = %d values, depth %d; the decoder's tokens say %d, %d", data, values, depth, rv, rd)
		}
		// White space around and between tokens changes nothing.
		var spaced bytes.Buffer
		if err := json.Indent(&spaced, data, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		if v, d := jsonShape(spaced.Bytes(), math.MaxInt, math.MaxInt); v != values || d != depth {
			t.Fatalf("indented %q: %d, %d; want %d, %d", spaced.Bytes(), v, d, values, depth)
		}
		// A document within the limits passes the check; others fail it
		// with the loading error.
		r := newRequest(data)
		err := checkJSONShape(r, data)
		if within := values <= maxJSONValues && depth <= maxJSONDepth; within != (err == nil) {
			t.Fatalf("checkJSONShape(%q) = %v, shape %d values, depth %d", data, err, values, depth)
		}
		if e, ok := errors.AsType[*Error](err); err != nil && (!ok || e.Status != 400 || e.Message != msgLoadFailed) {
			t.Fatalf("checkJSONShape(%q) = %v, want a 400 %q", data, err, msgLoadFailed)
		}
	})
}

func newRequest(body []byte) *http.Request {
	r, _ := http.NewRequest("POST", "/", bytes.NewReader(body))
	return r
}

// heapAfter returns the live heap after a collection.
func heapAfter() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// worstShapes are 1 MiB bodies (the JSON routes' limit) that decode to as
// much memory as the shape check allows, each of its own kind.
func worstShapes() map[string][]byte {
	const size = DefaultBodyLimit
	n := maxJSONValues
	fill := func(prefix, elem, suffix string, count int) []byte {
		var b strings.Builder
		b.WriteString(prefix)
		for i := range count {
			if i > 0 {
				b.WriteByte(',')
			}
			if strings.Contains(elem, "%d") {
				elem := fmt.Sprintf(elem, i)
				b.WriteString(elem)
			} else {
				b.WriteString(elem)
			}
		}
		b.WriteString(suffix)
		return []byte(b.String())
	}
	pad := func(b []byte) []byte { // a long string fills the rest
		s := `{"pad":"` + strings.Repeat("a", size-len(b)-len(`{"pad":"","x":}`)) + `","x":`
		return append(append([]byte(s), b...), '}')
	}
	shapes := map[string][]byte{
		// pad makes two values ('{' and ','), and one level.
		"empty objects":           pad(fill("[", "{}", "]", (n-2)/2)),
		"empty arrays":            pad(fill("[", "[]", "]", (n-2)/2)),
		"objects of one key":      pad(fill("[", `{"k%d":0}`, "]", (n-2)/2)),
		"keys":                    pad(fill("{", `"k%d":{}`, "}", (n-2)/2)),
		"numbers":                 pad(fill("[", "1", "]", n-2)),
		"nested, deepest allowed": pad(fill(strings.Repeat("[", maxJSONDepth-2), "{}", strings.Repeat("]", maxJSONDepth-2), (n-maxJSONDepth+1)/2)),
		"one long string":         pad([]byte(`""`)),
		"escapes":                 []byte(`{"a":"` + strings.Repeat(`\u00e9`, (size-10)/6) + `"}`),
	}
	// The same values with no padding: the fewest bytes for the values.
	for name, elem := range map[string]string{"empty objects": "{}", "empty arrays": "[]", "objects of one key": `{"k%d":0}`, "numbers": "1"} {
		count := (n - 1) / 2
		if elem == "1" {
			count = n - 1
		}
		shapes[name+", no padding"] = append(append([]byte(`{"x":`), fill("[", elem, "]", count)...), '}')
	}
	return shapes
}

// TestDecodedBodyMemory measures what a body of each worst shape the
// check allows holds once read and decoded as the handlers do (the buffer
// and the decoded value, live together), against what the budget charges
// it (its bytes, and jsonValueCost per value): the bound routes.go states.
func TestDecodedBodyMemory(t *testing.T) {
	// Not parallel: it measures the heap, which other tests would share.
	for name, data := range worstShapes() {
		t.Run(name, func(t *testing.T) {
			if len(data) > DefaultBodyLimit {
				t.Fatalf("body of %d bytes, over the limit", len(data))
			}
			values, depth := jsonShape(data, maxJSONValues, maxJSONDepth)
			if values > maxJSONValues || depth > maxJSONDepth {
				t.Fatalf("shape %d values, depth %d: over the limits", values, depth)
			}
			charge := int64(len(data)) + int64(values+1)*jsonValueCost
			before := heapAfter()
			buf, err := readGrowing(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := decodeJSONObject(buf, &v); err != nil {
				t.Fatal(err)
			}
			grown := int64(heapAfter() - before)
			runtime.KeepAlive(buf)
			runtime.KeepAlive(v)
			perValue := float64(grown-2*int64(len(data))) / float64(values+1)
			t.Logf("%s: %d bytes, %d values: live %d KiB = %.2f × its charge of %d KiB (%.0f B per value beyond twice the bytes)",
				name, len(data), values, grown>>10, float64(grown)/float64(charge), charge>>10, perValue)
			if grown > 3*charge {
				t.Errorf("live %d bytes, over three times the charge %d", grown, charge)
			}
		})
	}
}

// TestJSONShapeLimits checks the answers to bodies past the shape limits,
// on every route and form that decodes JSON, and to bodies at the limits.
func TestJSONShapeLimits(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// objects is a records body with pad making values values in all.
	objects := func(values int) string {
		return `{"email":"x","pad":[` + strings.Repeat("{},", (values-3)/2) + strings.Repeat("{}", 1) + `]}`
	}
	deep := func(depth int) string {
		return `{"email":"x","pad":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
	}
	for _, tt := range []struct {
		body          string
		values, depth int
	}{{objects(maxJSONValues), maxJSONValues, 3}, {objects(maxJSONValues + 2), maxJSONValues + 2, 3}, {deep(maxJSONDepth), maxJSONDepth + 1, maxJSONDepth}, {deep(maxJSONDepth + 1), maxJSONDepth + 2, maxJSONDepth + 1}} {
		if v, d := jsonShape([]byte(tt.body), math.MaxInt, math.MaxInt); v != tt.values || d != tt.depth {
			t.Fatalf("test body of shape %d, %d, want %d, %d", v, d, tt.values, tt.depth)
		}
	}
	form := func(payload string) (string, io.Reader) {
		return "application/x-www-form-urlencoded", strings.NewReader(url.Values{"@jsonPayload": {payload}}.Encode())
	}
	multi := func(payload string) (string, io.Reader) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		mw.WriteField("@jsonPayload", payload)
		mw.Close()
		return mw.FormDataContentType(), &b
	}
	asJSON := func(body string) (string, io.Reader) { return "application/json", strings.NewReader(body) }
	type req struct {
		name, method, path string
		super              bool
		enc                func(string) (string, io.Reader)
	}
	routes := []req{
		{"record create", "POST", "/api/collections/users/records", false, asJSON},
		{"record create, form", "POST", "/api/collections/users/records", false, form},
		{"record create, multipart", "POST", "/api/collections/users/records", false, multi},
		{"login", "POST", loginPath, false, asJSON},
		{"collection create", "POST", "/api/collections", true, asJSON},
		{"collection update", "PATCH", "/api/collections/users", true, asJSON},
		{"settings", "PATCH", "/api/settings", true, asJSON},
	}
	for _, rt := range routes {
		for _, body := range []struct {
			name string
			body string
			over bool
		}{
			{"values at the limit", objects(maxJSONValues), false},
			{"too many values", objects(maxJSONValues + 2), true},
			{"depth at the limit", deep(maxJSONDepth), false},
			{"too deep", deep(maxJSONDepth + 1), true},
		} {
			t.Run(rt.name+"/"+body.name, func(t *testing.T) {
				tok := ""
				if rt.super {
					tok = e.su
				}
				ct, rd := rt.enc(body.body)
				res := e.doRaw(rt.method, rt.path, tok, ct, rd)
				if body.over {
					wantError(t, res, 400, msgLoadFailed)
					return
				}
				// Decoded, then refused for what it says (or accepted).
				if res.Status >= 500 || strings.Contains(string(res.Body), msgLoadFailed) {
					t.Errorf("got %d %s, want it decoded", res.Status, res.Body)
				}
			})
		}
	}
	if n := e.api.budget.inUse(); n != 0 {
		t.Errorf("budget in use after the requests: %d bytes", n)
	}
	// The cause is in the request log.
	for _, cause := range []string{"JSON body with more than 10000 values", "JSON body nested deeper than 64"} {
		if items := e.listLogs(`data.details = "` + cause + `"`); len(items) != len(routes) {
			t.Errorf("%d request log entries with the cause %q, want %d", len(items), cause, len(routes))
		}
	}
}

// TestBodyCharge checks what a body holds of the budget once bound: its
// bytes, and jsonValueCost for each value it decodes to (JSON), each '&'
// (a urlencoded form) or each line (a multipart form).
func TestBodyCharge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.api.mux.Handle("POST /test/held", e.api.route(e.api.jsonLimits, func(w http.ResponseWriter, r *http.Request) error {
		if _, err := bind(r); err != nil {
			return err
		}
		return writeJSON(w, r, 200, map[string]int64{"held": e.api.budget.heldBy("127.0.0.1")})
	}))
	jsonBody := `{"a":[{},{},[1,2]],"b":"x,{["}`
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	mw.WriteField("a", "1\n2")
	mw.WriteField("b", "3")
	mw.Close()
	formBody := "a=1&b=2&c=%26&d="
	tests := []struct {
		name, ct, body string
		want           int64
	}{
		{"json", "application/json", jsonBody, int64(len(jsonBody)) + 10*jsonValueCost}, // 9 counted, +1
		{"form", "application/x-www-form-urlencoded", formBody, int64(len(formBody)) + 3*jsonValueCost},
		{"multipart form", mw.FormDataContentType(), mp.String(), int64(mp.Len()) + int64(bytes.Count(mp.Bytes(), []byte{'\n'}))*jsonValueCost},
		{"json payload in a form", "application/x-www-form-urlencoded", "@jsonPayload=" + url.QueryEscape(jsonBody),
			int64(len("@jsonPayload="+url.QueryEscape(jsonBody))) + 10*jsonValueCost},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := e.doRaw("POST", "/test/held", "", tt.ct, strings.NewReader(tt.body))
			if want := fmt.Sprintf(`{"held":%d}`, tt.want); res.Status != 200 || strings.TrimSpace(string(res.Body)) != want {
				t.Errorf("got %d %s, want 200 %s", res.Status, res.Body, want)
			}
		})
	}
	waitFor(t, "the budget given back", func() bool { return e.api.budget.inUse() == 0 })
}

// TestRateLimitRulesBound: no PATCH /api/settings body carries more than
// settings.MaxRateLimitRules rules, even as "{}" (which keeps the rule at
// its index as it was), so that bound (which an import applies) refuses
// nothing the API accepts.
func TestRateLimitRulesBound(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"rateLimits":{"rules":[`)
	for i := range settings.MaxRateLimitRules + 1 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{}`)
	}
	b.WriteString(`]}}`)
	if values, _ := jsonShape([]byte(b.String()), maxJSONValues, maxJSONDepth); values <= maxJSONValues {
		t.Errorf("a body of %d rules has %d JSON values, within api's %d: raise settings.MaxRateLimitRules with maxJSONValues", settings.MaxRateLimitRules+1, values, maxJSONValues)
	}
}
