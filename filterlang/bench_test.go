package filterlang

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// benchEntry is a typed in-memory log entry as the logs store keeps it.
type benchEntry struct {
	status  int
	method  string
	message string
}

func benchResolver(name string) (Field[*benchEntry], bool) {
	switch name {
	case "data.status":
		return Field[*benchEntry]{Type: TypeNumber, JSON: true,
			Num: func(e *benchEntry) (float64, bool) { return float64(e.status), e.status != 0 }}, true
	case "data.method":
		return Field[*benchEntry]{Type: TypeString, JSON: true,
			Str: func(e *benchEntry) (string, bool) { return e.method, e.method != "" }}, true
	case "message":
		return Field[*benchEntry]{Type: TypeString,
			Str: func(e *benchEntry) (string, bool) { return e.message, true }}, true
	case "level":
		return Field[*benchEntry]{Type: TypeNumber,
			Num: func(e *benchEntry) (float64, bool) { return float64(e.status / 100), true }}, true
	}
	return Field[*benchEntry]{}, false
}

const benchN = 1_000_000

func benchEntries() []benchEntry {
	rng := rand.New(rand.NewPCG(7, 7))
	statuses := []int{200, 200, 200, 201, 204, 304, 400, 401, 404, 500}
	methods := []string{"GET", "GET", "GET", "POST", "PUT", "DELETE"}
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ /_-"
	es := make([]benchEntry, benchN)
	var buf [40]byte
	for i := range es {
		msg := buf[:16+rng.IntN(24)]
		for j := range msg {
			msg[j] = letters[rng.IntN(len(letters))]
		}
		// One allocation of the exact size per message, in order, as a
		// decoder filling the store would make them.
		es[i] = benchEntry{status: statuses[rng.IntN(len(statuses))], method: methods[rng.IntN(len(methods))], message: string(msg)}
	}
	return es
}

func benchPass(b *testing.B, src string) {
	es := benchEntries()
	e, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(e, benchResolver, Options{})
	if err != nil {
		b.Fatal(err)
	}
	matched := 0
	runtime.GC() // finish with the set-up's garbage before timing
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		matched = 0
		for i := range es {
			if p(&es[i]) {
				matched++
			}
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/entry")
	b.ReportMetric(float64(matched), "matches")
}

// benchSelect is benchPass with a Selector: one op selects the matching
// entries of all benchN into a reused buffer.
func benchSelect(b *testing.B, src string) {
	es := benchEntries()
	ptrs := make([]*benchEntry, len(es))
	for i := range es {
		ptrs[i] = &es[i]
	}
	e, err := Parse(src)
	if err != nil {
		b.Fatal(err)
	}
	sel, err := CompileSelector(e, benchResolver, Options{})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]*benchEntry, 0, len(ptrs))
	runtime.GC() // finish with the set-up's garbage before timing
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		buf = sel(buf[:0], ptrs)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchN, "ns/entry")
	b.ReportMetric(float64(len(buf)), "matches")
}

// BenchmarkEval1M: one op evaluates a compiled two-comparison filter over
// 1,000,000 typed entries, as a batch (Selector).
func BenchmarkEval1M(b *testing.B) {
	benchSelect(b, `data.status >= 400 && data.method = "GET"`)
}

// BenchmarkEvalEach1M is BenchmarkEval1M calling the Predicate per entry.
func BenchmarkEvalEach1M(b *testing.B) {
	benchPass(b, `data.status >= 400 && data.method = "GET"`)
}

// BenchmarkLike1M: one op is one pass of a "contains" match over 1,000,000
// short strings.
func BenchmarkLike1M(b *testing.B) {
	benchPass(b, `message ~ "abc"`)
}

// BenchmarkLikePattern1M is the general LIKE path (a '_' wildcard), for
// comparison.
func BenchmarkLikePattern1M(b *testing.B) {
	benchPass(b, `message ~ "%a_c%"`)
}

// filter200 builds a filter of exactly 200 comparisons over every operator
// and operand type, written compactly to fit in MaxLength.
func filter200() string {
	ops := []string{"=", "!=", "<", "<=", ">", ">=", "~", "!~", "?=", "?!=", "?>", "?~"}
	var sb strings.Builder
	for i := range MaxComparisons {
		if i > 0 {
			if i%5 == 0 {
				sb.WriteString("||")
			} else {
				sb.WriteString("&&")
			}
		}
		op := ops[i%len(ops)]
		switch i % 4 {
		case 0:
			fmt.Fprintf(&sb, "data.status%s%d", op, 100+i)
		case 1:
			fmt.Fprintf(&sb, "data.method%s'M%d'", op, i)
		case 2:
			fmt.Fprintf(&sb, "message%s\"t %d\"", op, i)
		default:
			fmt.Fprintf(&sb, "level%s%d.5", op, i)
		}
	}
	return sb.String()
}

// BenchmarkParseCompile200: parse and compile a 200-comparison filter.
func BenchmarkParseCompile200(b *testing.B) {
	src := filter200()
	if len(src) > MaxLength {
		b.Fatalf("filter200 is %d bytes", len(src))
	}
	b.ReportAllocs()
	for b.Loop() {
		e, err := Parse(src)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Compile(e, benchResolver, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParse200 is the parse half of BenchmarkParseCompile200.
func BenchmarkParse200(b *testing.B) {
	src := filter200()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(src); err != nil {
			b.Fatal(err)
		}
	}
}
