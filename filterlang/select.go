package filterlang

import (
	"errors"
	"fmt"
	"slices"
)

// Selector is a compiled filter that evaluates a batch of entries at a
// time: it appends to dst, in order, the entries of es that match, and
// returns the extended slice. dst may be es[:0] to filter es in place;
// otherwise it must not overlap es. A Selector is safe for concurrent use
// if the field getters are.
//
// Evaluating comparison by comparison rather than entry by entry lets each
// comparison of an && run over the entries that are still candidates in a
// tight loop without data-dependent branches, which on large batches takes
// less time than calling the Predicate per entry (see BenchmarkEval1M and
// BenchmarkEvalEach1M).
type Selector[T any] func(dst, es []T) []T

// CompileSelector compiles a parsed filter like Compile, with the same
// resolution, errors and semantics, into a Selector. For every batch es,
// sel(nil, es) holds exactly the entries e of es, in order, for which the
// Predicate that Compile returns reports true.
func CompileSelector[T any](e Expr, r Resolver[T], opts Options) (Selector[T], error) {
	if e == nil {
		return nil, errors.New("filterlang: compile: nil expression")
	}
	c := newCompiler(r, opts)
	c.batch = true
	return c.selector(e, 0)
}

// selector compiles e into a Selector. A run of && narrows the batch term
// by term; a comparison with a specialised form selects in its own loop;
// anything else (a run of ||, a ~ or a dynamic field) selects with its
// predicate.
func (c *compiler[T]) selector(e Expr, depth int) (Selector[T], error) {
	switch x := e.(type) {
	case *Binary:
		if x == nil || x.Op != And {
			break
		}
		terms, err := flatten(x, depth)
		if err != nil {
			return nil, err
		}
		sels := make([]Selector[T], len(terms))
		for i, t := range terms {
			if sels[i], err = c.selector(t, depth+1); err != nil {
				return nil, err
			}
		}
		return func(dst, es []T) []T {
			for len(es) > 0 {
				b := es[:min(len(es), blockSize)]
				es = es[len(b):]
				n := len(dst)
				dst = sels[0](dst, b)
				for _, sel := range sels[1:] {
					if len(dst) == n {
						break
					}
					dst = sel(dst[:n], dst[n:])
				}
			}
			return dst
		}, nil
	case *Compare:
		k, err := c.compare(x)
		if err != nil {
			return nil, err
		}
		if k.sel != nil {
			return k.sel, nil
		}
		return selectPred(k.chain(nil, false)), nil
	case nil:
		return nil, errors.New("filterlang: compile: nil expression")
	default:
		return nil, fmt.Errorf("filterlang: compile: unsupported expression %T", e)
	}
	p, err := c.expr(e, depth)
	if err != nil {
		return nil, err
	}
	return selectPred(p), nil
}

// blockSize is how many entries a run of && takes through all its terms at
// a time: few enough that the entries the first term read are still in the
// CPU cache when the later terms read them again.
var blockSize = 1024

// b2i is 1 for true and 0 for false; the compiler makes it a flag move,
// not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// window grows dst for n more entries and returns the space after its
// length. Writing an entry there and advancing by b2i(match) selects
// without a branch; with dst == es[:0] each write lands at or before the
// entry being read, so filtering in place is safe.
func window[T any](dst []T, n int) (grown, w []T) {
	dst = slices.Grow(dst, n)
	return dst, dst[len(dst) : len(dst)+n]
}

// selectPred returns the Selector that calls p on each entry.
func selectPred[T any](p Predicate[T]) Selector[T] {
	return func(dst, es []T) []T {
		dst, w := window(dst, len(es))
		n := 0
		for _, e := range es {
			w[n] = e
			n += b2i(p(e))
		}
		return dst[:len(dst)+n]
	}
}

// selectOp returns the Selector for get(e) op k, where a NULL field yields
// nullRes: the batch form of fieldOp. Each loop computes its result as
// (ok AND cmp) OR (NOT ok AND nullRes) without branching on either.
func selectOp[T any, V float64 | string](get func(T) (V, bool), op Op, k V, nullRes bool) Selector[T] {
	if op == Eq || op == Neq {
		ne, nr := op == Neq, b2i(nullRes)
		return func(dst, es []T) []T {
			dst, w := window(dst, len(es))
			n := 0
			for _, e := range es {
				v, ok := get(e)
				w[n] = e
				n += b2i(ok)&b2i((v == k) != ne) | b2i(!ok)&nr
			}
			return dst[:len(dst)+n]
		}
	}
	// An ordering operator never matches NULL. Bit 0, 1 or 2 of mask is
	// its result when v is less than, equal to or greater than k.
	var mask int
	switch op {
	case Lt:
		mask = 0b001
	case Lte:
		mask = 0b011
	case Gt:
		mask = 0b100
	case Gte:
		mask = 0b110
	}
	return func(dst, es []T) []T {
		dst, w := window(dst, len(es))
		n := 0
		for _, e := range es {
			v, ok := get(e)
			w[n] = e
			n += b2i(ok) & (mask >> (1 + b2i(v > k) - b2i(v < k))) & 1
		}
		return dst[:len(dst)+n]
	}
}
