package conformance

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// An observation is what a failing check saw, reduced to what stays the
// same from one run to the next: a known-deviation entry records it
// (known.go), and a later run that observes something else reports the
// entry CHANGED. It is made from the check's Actual (or its Detail when it
// gave none); when that ends with the answer the server gave (status, body,
// method and path), the answer alone is kept, and
//
//   - an answer in the error envelope becomes its status, its message and
//     the codes under data, sorted: 400 "Invalid filter format." or
//     400 "An error occurred while validating the submitted data." data.file=validation_invalid_mime_type;
//   - another JSON object becomes its status and its keys, sorted:
//     200 {record, token};
//   - anything else is kept as text, with what changes per run put as a
//     placeholder (tokens, timestamps, the suite's random fixture names,
//     record ids, runs of nine digits or more: unix times, the timestamps in
//     PocketBase's backup names) and cut after observationMax characters.
//
// The method and path of the answer are left out: the requirement names
// them already, and the path holds fixture names.

// observationMax bounds the length of an observation, in characters.
const observationMax = 160

// reAnswer finds response.String(), "STATUS BODY (METHOD PATH)", at the
// end of what a check reported, after any words of its own
// ("\"message\" in 400 {…} (GET /api/logs)").
var reAnswer = regexp.MustCompile(`(?:^|\s)([1-5]\d\d) (.*) \([A-Z]+ [^ ]*\)$`)

// volatile are what differs between two runs against the same server, in
// the order they are replaced, with their placeholders.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`eyJ[A-Za-z0-9_-]*(\.[A-Za-z0-9_-]*){1,2}`), "<token>"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?Z?`), "<time>"},
	{regexp.MustCompile(`\bcf[-_][a-z0-9]{4,}([-_][a-z0-9]+)*`), "cf-<random>"},
	{regexp.MustCompile(`\b[a-z0-9]{15}\b`), "<id>"},
	{regexp.MustCompile(`\d{9,}`), "<n>"},
}

// observation returns the observation of a failing result.
func observation(res Result) string {
	s := res.Actual
	if s == "" {
		s = res.Detail
	}
	s = strings.Join(strings.Fields(s), " ")
	if m := reAnswer.FindStringSubmatch(s); m != nil {
		if o, ok := observeBody(m[1], m[2]); ok {
			return o
		}
		s = m[1] + " " + m[2]
	}
	return stableText(s)
}

// observeBody reduces a JSON body answered with status: an error envelope
// to its message and data codes, another object to its keys. A body cut
// short by the report ("…") is no JSON; its message, if it shows one, is
// taken by itself.
func observeBody(status, body string) (string, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &obj); err != nil {
		if m := reMessage.FindStringSubmatch(body); m != nil {
			var msg string
			if json.Unmarshal([]byte(`"`+m[1]+`"`), &msg) == nil {
				return stableText(fmt.Sprintf("%s %q", status, msg)), true
			}
		}
		if keys := leadingKeys(body); len(keys) > 0 {
			return stableText(fmt.Sprintf("%s {%s, …}", status, strings.Join(keys, ", "))), true
		}
		return "", false
	}
	var msg string
	if json.Unmarshal(obj["message"], &msg) == nil && msg != "" {
		var data map[string]struct {
			Code string `json:"code"`
		}
		json.Unmarshal(obj["data"], &data)
		o := fmt.Sprintf("%s %q", status, msg)
		for _, k := range slices.Sorted(maps.Keys(data)) {
			o += fmt.Sprintf(" data.%s=%s", k, data[k].Code)
		}
		return stableText(o), true
	}
	return fmt.Sprintf("%s {%s}", status, strings.Join(slices.Sorted(maps.Keys(obj)), ", ")), true
}

// leadingKeys returns the keys of the top-level object that a body cut
// short shows before the cut, in order.
func leadingKeys(body string) []string {
	dec := json.NewDecoder(strings.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var keys []string
	depth, key := 1, true
	for {
		tok, err := dec.Token()
		if err != nil {
			return keys
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			if depth == 1 {
				key = true // once this value is closed
			}
			depth++
		case json.Delim('}'), json.Delim(']'):
			if depth--; depth == 0 {
				return keys
			}
		default:
			if depth == 1 {
				if k, ok := tok.(string); ok && key {
					keys = append(keys, k)
				}
				key = !key
			}
		}
	}
}

// reMessage finds the message of an error envelope in a body cut short.
var reMessage = regexp.MustCompile(`"message":"((?:[^"\\]|\\.)*)"`)

// stableText replaces what changes per run in s and bounds its length.
func stableText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	if utf8.RuneCountInString(s) > observationMax {
		s = string([]rune(s)[:observationMax-1]) + "…"
	}
	return s
}

// lifetime says how long after now a just issued token's exp claim lies,
// to the hour ("expiring in 168h (7 days)"), so that the observation a
// known deviation records stays the same from run to run.
func lifetime(exp any) string {
	f, ok := exp.(float64)
	if !ok {
		return "exp " + jsonText(exp)
	}
	d := time.Until(time.Unix(int64(f), 0)).Round(time.Hour)
	if d%(24*time.Hour) == 0 && d > 0 {
		return fmt.Sprintf("expiring in %dh (%d days)", int(d.Hours()), int(d.Hours())/24)
	}
	return fmt.Sprintf("expiring in %dh", int(d.Hours()))
}
