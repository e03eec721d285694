package metrics

import (
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The metric types of the text format, as its TYPE lines name them.
const (
	typeCounter   = "counter"
	typeGauge     = "gauge"
	typeHistogram = "histogram"
)

// Writer collects the samples of one scrape, family by family, and writes
// them in the text exposition format 0.0.4: each family once, with its
// HELP and TYPE lines, families sorted by name and samples by their
// labels, so that the output of equal values is byte for byte the same.
// A gather function calls its methods; the Registry writes the result.
//
// Labels are given as name, value pairs (an odd one out is dropped). The
// names are the caller's constants; the values are escaped here, so any
// string is safe, but no value may come from user input unbounded (see the
// package documentation). The first HELP and type given for a name win:
// a sample of another type under a name already used is dropped.
type Writer struct {
	families map[string]*family
}

type family struct {
	typ, help string
	samples   []sample
}

type sample struct {
	labels string // rendered, without braces: a="x",b="y"
	lines  []string
}

// NewWriter returns an empty Writer.
func NewWriter() *Writer { return &Writer{families: map[string]*family{}} }

// Counter adds the sample v (a total that only grows) to the counter
// family name, which ends in _total by convention.
func (w *Writer) Counter(name, help string, v float64, labels ...string) {
	w.add(name, typeCounter, help, labels, func(ls string) []string { return []string{line(name, ls, v)} })
}

// Gauge adds the sample v to the gauge family name.
func (w *Writer) Gauge(name, help string, v float64, labels ...string) {
	w.add(name, typeGauge, help, labels, func(ls string) []string { return []string{line(name, ls, v)} })
}

// Histogram adds the histogram h, with the labels given, to the family
// name: its cumulative _bucket lines (le ending with +Inf), _sum and
// _count.
func (w *Writer) Histogram(name, help string, h HistogramSnapshot, labels ...string) {
	w.add(name, typeHistogram, help, labels, func(ls string) []string {
		lines := make([]string, 0, len(h.Bounds)+3)
		cum := uint64(0)
		for i, le := range h.Bounds {
			cum += h.Counts[i]
			lines = append(lines, line(name+"_bucket", joinLabels(ls, `le="`+formatFloat(le)+`"`), float64(cum)))
		}
		lines = append(lines, line(name+"_bucket", joinLabels(ls, `le="+Inf"`), float64(h.Count)))
		return append(lines, line(name+"_sum", ls, h.Sum), line(name+"_count", ls, float64(h.Count)))
	})
}

func (w *Writer) add(name, typ, help string, labels []string, lines func(ls string) []string) {
	f := w.families[name]
	if f == nil {
		f = &family{typ: typ, help: help}
		w.families[name] = f
	}
	if f.typ != typ {
		return
	}
	ls := renderLabels(labels)
	f.samples = append(f.samples, sample{labels: ls, lines: lines(ls)})
}

// WriteTo writes the families collected, sorted, in the text format.
func (w *Writer) WriteTo(out io.Writer) (int64, error) {
	var b strings.Builder
	names := make([]string, 0, len(w.families))
	for name := range w.families {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f := w.families[name]
		b.WriteString("# HELP " + name + " " + escapeHelp(f.help) + "\n")
		b.WriteString("# TYPE " + name + " " + f.typ + "\n")
		slices.SortStableFunc(f.samples, func(a, b sample) int { return strings.Compare(a.labels, b.labels) })
		for i, s := range f.samples {
			if i > 0 && s.labels == f.samples[i-1].labels {
				continue // one sample per label set: the first given
			}
			for _, l := range s.lines {
				b.WriteString(l + "\n")
			}
		}
	}
	n, err := io.WriteString(out, b.String())
	return int64(n), err
}

// line is one sample line: name{labels} value.
func line(name, labels string, v float64) string {
	if labels != "" {
		name += "{" + labels + "}"
	}
	return name + " " + formatFloat(v)
}

func joinLabels(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// renderLabels renders name, value pairs as a="x",b="y", sorted by name.
func renderLabels(kv []string) string {
	pairs := make([][2]string, 0, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		pairs = append(pairs, [2]string{kv[i], kv[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = p[0] + `="` + escapeLabel(p[1]) + `"`
	}
	return strings.Join(parts, ",")
}

// escapeLabel escapes a label value as the text format requires: a
// backslash, a double quote and a line feed become \\, \" and \n.
func escapeLabel(v string) string {
	if !strings.ContainsAny(v, "\\\"\n") {
		return v
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(v)
}

// escapeHelp escapes a HELP text: a backslash and a line feed (a double
// quote stays as it is there).
func escapeHelp(v string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(v)
}

// formatFloat writes v as the text format reads it: the shortest decimal
// that round-trips, and +Inf, -Inf and NaN by those names.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
