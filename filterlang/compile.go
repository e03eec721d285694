package filterlang

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Field tells Compile how to read one field of an entry of type T. Exactly
// one getter is set, the one matching Type: Str for TypeString, Num for
// TypeNumber, Dyn for TypeDynamic. A getter's false result (KindNull for
// Dyn) means NULL: the entry has no value for the field.
//
// JSON selects the semantics of a JSON attribute (data.status) over those of
// a column (level): JSON fields compare strictly, with no folding of "" and
// NULL and no type affinity; columns behave like SQLite columns of the
// declared type. See the package documentation.
//
// Param marks a value bound per evaluation rather than stored with the
// entry (a bound parameter in PocketBase's SQL, such as a value of the
// request a rule is checked for): it compares as a constant does, with no
// type affinity, and = and != choose between their forms for an empty
// (NULL or "") and a non-empty constant by the value each evaluation
// reads. A Param field on the right of ~ is a pattern, as a constant is.
//
// Guard, when set, is a condition joined to every comparison that names
// the field: such a comparison holds for an entry only if Guard reports
// true for it, as if "cond" were written "(cond && guard)". For an entry
// whose Guard is false every comparison naming the field is false,
// whatever its operator (!=, !~ and the any-of forms included) and
// whatever the field's value; the rest of the expression is evaluated as
// usual. This is how PocketBase hides an auth record's email from the
// filters of non-superusers (the comparison is joined to
// emailVisibility = TRUE).
type Field[T any] struct {
	Type  Type
	JSON  bool
	Param bool
	Str   func(T) (string, bool)
	Num   func(T) (float64, bool)
	Dyn   func(T) Value
	Guard func(T) bool
}

// Resolver maps a field name as written in a filter ("level",
// "data.status") to its Field; ok false means the field does not exist, and
// Compile reports the name as unknown. A resolver that accepts "data.*"
// names opens that namespace.
type Resolver[T any] func(name string) (f Field[T], ok bool)

// Options adjusts Compile.
type Options struct {
	// Now is the clock the date macros (@now, @todayStart …) are computed
	// from, once per Compile; nil means time.Now.
	Now func() time.Time
	// ParamMacros makes Compile ask the Resolver for a date macro name
	// (@now, @hour …) before computing it, so that a resolver can bind
	// the macros per evaluation (a Param field reading MacroValue at the
	// entry's own time) and a predicate need not be compiled again as
	// the clock moves. A macro the Resolver does not know keeps its
	// Compile-time value.
	ParamMacros bool
}

// Predicate is a compiled filter: it reports whether an entry matches.
// It is safe for concurrent use if the field getters are.
type Predicate[T any] func(T) bool

// Compile turns a parsed filter into a predicate over entries of type T,
// resolving every identifier once: a macro, then a field of r, then the
// keywords null, true and false (in any case). An identifier that is none
// of these is reported as a *SyntaxError at its offset. A Field that does
// not satisfy its documented contract is reported as a plain error.
//
// The predicate is built from closures specialised per operator and field
// type; evaluating it performs no reflection, no map lookups and no
// allocations, except in two rare cases: a plain (not any-of) operator
// applied to an array Value whose JSON text is not given in Value.Str, and
// a field on the right of ~ whose value ends in a lone backslash.
func Compile[T any](e Expr, r Resolver[T], opts Options) (Predicate[T], error) {
	if e == nil {
		return nil, errors.New("filterlang: compile: nil expression")
	}
	return newCompiler(r, opts).expr(e, 0)
}

func newCompiler[T any](r Resolver[T], opts Options) *compiler[T] {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	return &compiler[T]{resolve: r, now: now().UTC(), fast: true, paramMacros: opts.ParamMacros}
}

// compiler holds the state of one Compile call.
type compiler[T any] struct {
	resolve Resolver[T]
	now     time.Time
	// fast enables the specialised closures; tests turn it off to check
	// them against the general path.
	fast bool
	// batch: the comparisons are for a Selector, so fieldConst builds
	// their selection loops too.
	batch bool
	// paramMacros: Options.ParamMacros.
	paramMacros bool
}

// expr compiles e; depth guards against hand-built trees deeper than any
// Parse produces.
func (c *compiler[T]) expr(e Expr, depth int) (Predicate[T], error) {
	p, _, err := c.term(e, depth)
	return p, err
}

// chain builds a comparison's predicate with the rest of a join chain as
// its continuation: one closure evaluating cond && next(e) (and) or
// cond || next(e) (!and), which saves a call per comparison and entry over
// joining two closures. With a nil next it builds the plain predicate.
type chain[T any] func(next Predicate[T], and bool) Predicate[T]

// term compiles e and, for a comparison that supports it, returns its
// chain builder too.
func (c *compiler[T]) term(e Expr, depth int) (Predicate[T], chain[T], error) {
	if depth > MaxComparisons+MaxDepth {
		return nil, nil, errors.New("filterlang: compile: expression nested too deeply")
	}
	switch e := e.(type) {
	case *Binary:
		if e == nil || (e.Op != And && e.Op != Or) {
			return nil, nil, fmt.Errorf("filterlang: compile: invalid join %v", e)
		}
		// Compile the terms of the run in source order (so the first error
		// is the leftmost), then link them from the right.
		terms, err := flatten(e, depth)
		if err != nil {
			return nil, nil, err
		}
		preds := make([]Predicate[T], len(terms))
		chains := make([]chain[T], len(terms))
		for i, x := range terms {
			var err error
			if preds[i], chains[i], err = c.term(x, depth+1); err != nil {
				return nil, nil, err
			}
		}
		and := e.Op == And
		p := preds[len(preds)-1]
		for i := len(preds) - 2; i >= 0; i-- {
			switch x, y := preds[i], p; {
			case chains[i] != nil:
				p = chains[i](y, and)
			case and:
				p = func(e T) bool { return x(e) && y(e) }
			default:
				p = func(e T) bool { return x(e) || y(e) }
			}
		}
		return p, nil, nil
	case *Compare:
		k, err := c.compare(e)
		if err != nil {
			return nil, nil, err
		}
		return k.chain(nil, false), k.chain, nil
	}
	return nil, nil, fmt.Errorf("filterlang: compile: unsupported expression %T", e)
}

// flatten returns the terms of the run of e's join that e heads: a && b &&
// c gives [a b c], with (a || b) a single term.
func flatten(e *Binary, depth int) ([]Expr, error) {
	var terms []Expr
	var walk func(x Expr, depth int) error
	walk = func(x Expr, depth int) error {
		if depth > MaxComparisons+MaxDepth {
			return errors.New("filterlang: compile: expression nested too deeply")
		}
		if b, ok := x.(*Binary); ok && b != nil && b.Op == e.Op {
			if err := walk(b.X, depth+1); err != nil {
				return err
			}
			return walk(b.Y, depth+1)
		}
		terms = append(terms, x)
		return nil
	}
	if err := walk(e, depth); err != nil {
		return nil, err
	}
	return terms, nil
}

func constant[T any](b bool) Predicate[T] {
	return func(T) bool { return b }
}

// operand is a resolved side of a comparison: a field or a constant.
type operand[T any] struct {
	field  *Field[T] // nil for a constant
	aff    affinity
	strict bool   // JSON semantics
	param  bool   // a Param field: compares as a constant read per evaluation
	c      scalar // the constant
	empty  bool   // the constant is NULL or ""
}

// value returns a getter of the operand as a Value.
func (o *operand[T]) value() func(T) Value {
	if o.field == nil {
		var v Value
		switch o.c.kind {
		case KindNumber:
			v = Value{Kind: KindNumber, Num: o.c.num}
		case KindString:
			v = Value{Kind: KindString, Str: o.c.str}
		}
		return func(T) Value { return v }
	}
	switch f := o.field; f.Type {
	case TypeNumber:
		get := f.Num
		return func(e T) Value {
			if n, ok := get(e); ok {
				return Value{Kind: KindNumber, Num: n}
			}
			return Value{}
		}
	case TypeString:
		get := f.Str
		return func(e T) Value {
			if s, ok := get(e); ok {
				return Value{Kind: KindString, Str: s}
			}
			return Value{}
		}
	}
	return o.field.Dyn
}

// operand resolves one side of a comparison.
func (c *compiler[T]) operand(x Operand) (operand[T], error) {
	switch x := x.(type) {
	case Str:
		return operand[T]{c: strScalar(x.Value), empty: x.Value == ""}, nil
	case Num:
		return operand[T]{c: numScalar(x.Value)}, nil
	case Ident:
		if v, ok := macro(x.Name, c.now); ok && !c.paramMacros {
			return operand[T]{c: v}, nil
		}
		if c.resolve != nil {
			if f, ok := c.resolve(x.Name); ok {
				if err := checkField(x.Name, &f); err != nil {
					return operand[T]{}, err
				}
				if f.Param {
					return operand[T]{field: &f, param: true}, nil
				}
				o := operand[T]{field: &f, strict: f.JSON}
				if !f.JSON {
					switch f.Type {
					case TypeString:
						o.aff = affText
					case TypeNumber:
						o.aff = affNumeric
					}
				}
				return o, nil
			}
		}
		if v, ok := macro(x.Name, c.now); ok {
			return operand[T]{c: v}, nil
		}
		switch strings.ToLower(x.Name) {
		case "null":
			return operand[T]{empty: true}, nil
		case "true":
			return operand[T]{c: numScalar(1)}, nil
		case "false":
			return operand[T]{c: numScalar(0)}, nil
		}
		return operand[T]{}, &SyntaxError{Offset: x.NamePos, Msg: fmt.Sprintf("unknown field %q", x.Name)}
	}
	return operand[T]{}, fmt.Errorf("filterlang: compile: unsupported operand %T", x)
}

// checkField enforces the Field contract.
func checkField[T any](name string, f *Field[T]) error {
	var ok bool
	switch f.Type {
	case TypeString:
		ok = f.Str != nil && f.Num == nil && f.Dyn == nil
	case TypeNumber:
		ok = f.Num != nil && f.Str == nil && f.Dyn == nil
	case TypeDynamic:
		ok = f.Dyn != nil && f.Str == nil && f.Num == nil
	}
	if !ok {
		return fmt.Errorf("filterlang: compile: field %q: Type %d needs exactly its own getter", name, f.Type)
	}
	return nil
}

// eqMode is how = and != treat NULL and "", as in PocketBase.
type eqMode uint8

const (
	// modeStrict is IS / IS NOT: a JSON attribute is involved; NULL equals
	// only NULL and "" only "".
	modeStrict eqMode = iota
	// modeDirect is L = R / L IS NOT R: the constant side is not empty, so
	// a NULL field fails = and passes !=.
	modeDirect
	// modeEmpty is (L = '' OR L IS NULL) and its negation: the constant
	// side is null or "", which both mean "NULL or empty".
	modeEmpty
	// modeCoalesce is COALESCE(L,'') = COALESCE(R,''): two fields.
	modeCoalesce
)

// cmpSpec evaluates one comparison operator on scalars.
type cmpSpec struct {
	op         Op
	mode       eqMode
	laff, raff affinity
}

func (s *cmpSpec) eval(l, r scalar) bool {
	switch s.op {
	case Eq, Neq:
		var eq bool
		switch s.mode {
		case modeStrict:
			if l.null() || r.null() {
				eq = l.null() && r.null()
			} else {
				l, r = withAffinity(l, r, s.laff, s.raff)
				eq = compareScalars(l, r) == 0
			}
		case modeDirect:
			if l.null() || r.null() {
				return s.op == Neq
			}
			l, r = withAffinity(l, r, s.laff, s.raff)
			eq = compareScalars(l, r) == 0
		case modeEmpty:
			if l.null() || r.null() {
				return s.op == Eq
			}
			l, r = withAffinity(l, r, s.laff, s.raff)
			eq = compareScalars(l, r) == 0
		case modeCoalesce:
			if l.null() {
				l = strScalar("")
			}
			if r.null() {
				r = strScalar("")
			}
			eq = compareScalars(l, r) == 0
		}
		return eq == (s.op == Eq)
	}
	if l.null() || r.null() {
		return false
	}
	l, r = withAffinity(l, r, s.laff, s.raff)
	return ordered(s.op, compareScalars(l, r))
}

// ordered applies an ordering operator to a comparison result.
func ordered(op Op, c int) bool {
	switch op {
	case Lt:
		return c < 0
	case Lte:
		return c <= 0
	case Gt:
		return c > 0
	case Gte:
		return c >= 0
	}
	return false
}

// flip returns the operator with its operands swapped: a < b ⇔ b > a.
func flip(op Op) Op {
	switch op {
	case Lt:
		return Gt
	case Lte:
		return Gte
	case Gt:
		return Lt
	case Gte:
		return Lte
	}
	return op
}

// pairEval evaluates an operator on two scalars.
type pairEval interface{ eval(l, r scalar) bool }

// evalValues applies ev to a and b; with each (an any-of operator), an array on either side
// means "some element" (with arrays on both sides, some pair).
func evalValues(ev pairEval, a, b Value, each bool) bool {
	if !each || (a.Kind != KindArray && b.Kind != KindArray) {
		return ev.eval(scalarOf(a), scalarOf(b))
	}
	if a.Kind != KindArray {
		return evalRight(ev, scalarOf(a), b)
	}
	for i := range a.Arr {
		if evalRight(ev, scalarOf(a.Arr[i]), b) {
			return true
		}
	}
	return false
}

func evalRight(ev pairEval, l scalar, b Value) bool {
	if b.Kind != KindArray {
		return ev.eval(l, scalarOf(b))
	}
	for i := range b.Arr {
		if ev.eval(l, scalarOf(b.Arr[i])) {
			return true
		}
	}
	return false
}

// general returns the predicate that evaluates ev on the two operands'
// Values; it is correct for every operand combination.
func general[T any](ev pairEval, l, r *operand[T], each bool) Predicate[T] {
	lv, rv := l.value(), r.value()
	return func(e T) bool { return evalValues(ev, lv(e), rv(e), each) }
}

// comparison is a compiled comparison: its chain builder and, when it has
// a specialised batch form, its selector.
type comparison[T any] struct {
	chain chain[T]
	sel   Selector[T] // nil: select with the predicate
}

// compare compiles a comparison.
func (c *compiler[T]) compare(x *Compare) (comparison[T], error) {
	if x == nil || x.Left == nil || x.Right == nil {
		return comparison[T]{}, errors.New("filterlang: compile: incomplete comparison")
	}
	l, err := c.operand(x.Left)
	if err != nil {
		return comparison[T]{}, err
	}
	r, err := c.operand(x.Right)
	if err != nil {
		return comparison[T]{}, err
	}
	var k comparison[T]
	switch x.Op {
	case Like, NotLike:
		k = comparison[T]{chain: c.like(x, &l, &r)}
	case Eq, Neq, Lt, Lte, Gt, Gte:
		k = c.cmp(x, &l, &r)
	default:
		return comparison[T]{}, fmt.Errorf("filterlang: compile: invalid comparison operator %v", x.Op)
	}
	return guarded(k, l.guard(), r.guard()), nil
}

// guard returns the Guard of the operand's field, or nil.
func (o *operand[T]) guard() func(T) bool {
	if o.field == nil {
		return nil
	}
	return o.field.Guard
}

// guarded joins comparison k to the guards of its operands' fields (nil
// when a side has none): the comparison holds only where they do. It
// selects with its predicate, the guard first.
func guarded[T any](k comparison[T], lg, rg func(T) bool) comparison[T] {
	switch {
	case lg == nil && rg == nil:
		return k
	case lg == nil:
		lg = rg
	case rg != nil:
		l, r := lg, rg
		lg = func(e T) bool { return l(e) && r(e) }
	}
	p, g := k.chain(nil, false), lg
	return comparison[T]{chain: plain(func(e T) bool { return g(e) && p(e) })}
}

// plain turns a predicate into a chain builder that joins with a closure.
func plain[T any](p Predicate[T]) chain[T] {
	return func(next Predicate[T], and bool) Predicate[T] {
		switch {
		case next == nil:
			return p
		case and:
			return func(e T) bool { return p(e) && next(e) }
		}
		return func(e T) bool { return p(e) || next(e) }
	}
}

// cmp compiles = != < <= > >= and their any-of variants.
func (c *compiler[T]) cmp(x *Compare, l, r *operand[T]) comparison[T] {
	if l.param || r.param {
		return comparison[T]{chain: plain(paramCmp(x, l, r))}
	}
	s := &cmpSpec{op: x.Op, laff: l.aff, raff: r.aff}
	lf, rf := l.field != nil, r.field != nil
	if fixed, res := eqForm(s, l, r); fixed {
		return comparison[T]{chain: plain(constant[T](res))}
	}
	// Convert a constant for the other side's affinity once, here.
	if !lf && rf {
		l.c = constAffinity(l.c, s.raff)
	}
	if lf && !rf {
		r.c = constAffinity(r.c, s.laff)
	}
	switch {
	case !lf && !rf:
		return comparison[T]{chain: plain(constant[T](general(s, l, r, x.AnyOf)(*new(T))))}
	case c.fast && lf && !rf:
		if k, ok := fieldConst(s, l.field, r.c, c.batch); ok {
			return k
		}
	case c.fast && !lf && rf:
		fs := *s
		fs.op, fs.laff, fs.raff = flip(s.op), s.raff, s.laff
		if k, ok := fieldConst(&fs, r.field, l.c, c.batch); ok {
			return k
		}
	}
	return comparison[T]{chain: plain(general(s, l, r, x.AnyOf))}
}

// eqForm sets s.mode for = and != from the operands' kinds (and, for
// constants, emptiness), as PocketBase chooses the SQL form, replacing an
// empty constant by "" where PocketBase binds it so. fixed reports a
// comparison of two empty constants, whose result is res.
func eqForm[T any](s *cmpSpec, l, r *operand[T]) (fixed, res bool) {
	if s.op != Eq && s.op != Neq {
		return false, false
	}
	lf, rf := l.field != nil, r.field != nil
	switch {
	case l.strict || r.strict:
		s.mode = modeStrict
	case lf && rf:
		// COALESCE(...) is an expression: no affinity survives it.
		s.mode, s.laff, s.raff = modeCoalesce, affNone, affNone
	case !lf && !rf:
		if l.empty && r.empty {
			return true, s.op == Eq
		}
		s.mode = modeDirect
		l.c, r.c = emptyAsText(l), emptyAsText(r)
	case l.empty || r.empty:
		s.mode = modeEmpty
		l.c, r.c = emptyAsText(l), emptyAsText(r)
	default:
		s.mode = modeDirect
	}
	return false, false
}

// bindParam returns o with a Param field replaced by the constant v it
// read; other operands are returned unchanged.
func bindParam[T any](o *operand[T], v Value) operand[T] {
	if !o.param {
		return *o
	}
	k := scalarOf(v)
	return operand[T]{c: k, empty: k.null() || (k.kind == KindString && k.str == "")}
}

// paramCmp compiles a comparison with a Param field on a side: each
// evaluation binds the Param values as constants and compares as cmp
// does for constants.
func paramCmp[T any](x *Compare, l, r *operand[T]) Predicate[T] {
	gen := paramGeneral(x, l, r)
	switch {
	case l.param && r.field == nil:
		return paramConst(x.Op, x.AnyOf, l.field.Dyn, r, gen)
	case r.param && l.field == nil:
		return paramConst(flip(x.Op), x.AnyOf, r.field.Dyn, l, gen)
	}
	return gen
}

// paramGeneral is paramCmp for every operand combination.
func paramGeneral[T any](x *Compare, l, r *operand[T]) Predicate[T] {
	lv, rv := l.value(), r.value()
	base := cmpSpec{op: x.Op, laff: l.aff, raff: r.aff}
	each := x.AnyOf
	return func(e T) bool {
		a, b := lv(e), rv(e)
		lo, ro := bindParam(l, a), bindParam(r, b)
		s := base
		if fixed, res := eqForm(&s, &lo, &ro); fixed {
			return res
		}
		// A constant takes the other side's affinity; an array stays
		// whole for the any-of operators.
		if lo.field == nil && !(each && a.Kind == KindArray) {
			a = scalarValue(constAffinity(lo.c, s.raff))
		}
		if ro.field == nil && !(each && b.Kind == KindArray) {
			b = scalarValue(constAffinity(ro.c, s.laff))
		}
		if each && (a.Kind == KindArray || b.Kind == KindArray) {
			arr := s // escapes through the interface: only on this path
			return evalValues(&arr, a, b, true)
		}
		return s.eval(scalarOf(a), scalarOf(b))
	}
}

// paramConst compiles param op k, a Param field (read with get) against a
// constant: what paramCmp does, without its general steps, for the
// commonest form of a rule's request operands (@request.method = "GET").
// An array value under an any-of operator takes gen, the general form.
func paramConst[T any](op Op, each bool, get func(T) Value, k *operand[T], gen Predicate[T]) Predicate[T] {
	kc, kEmpty := k.c, k.empty
	if kEmpty {
		kc = strScalar("") // PocketBase binds an empty side as ""
	}
	eq := op == Eq || op == Neq
	return func(e T) bool {
		v := get(e)
		if v.Kind == KindArray && each {
			return gen(e)
		}
		pv := scalarOf(v)
		pEmpty := pv.null() || (pv.kind == KindString && pv.str == "")
		if !eq {
			s := cmpSpec{op: op}
			return s.eval(pv, k.c)
		}
		if pEmpty && kEmpty {
			return op == Eq
		}
		if pEmpty {
			pv = strScalar("")
		}
		if pv.kind == KindString && kc.kind == KindString {
			return (pv.str == kc.str) == (op == Eq)
		}
		s := cmpSpec{op: op, mode: modeDirect}
		return s.eval(pv, kc)
	}
}

// scalarValue is the Value of a constant.
func scalarValue(k scalar) Value {
	switch k.kind {
	case KindNumber:
		if k.numText {
			return Value{Kind: KindString, Str: formatNum(k.num)}
		}
		return Value{Kind: KindNumber, Num: k.num}
	case KindString:
		return Value{Kind: KindString, Str: k.str}
	}
	return Value{}
}

// emptyAsText returns o's constant with NULL replaced by "" (PocketBase
// binds an empty side as the empty string).
func emptyAsText[T any](o *operand[T]) scalar {
	if o.field == nil && o.empty {
		return strScalar("")
	}
	return o.c
}

// constAffinity converts constant k for a field of affinity aff.
func constAffinity(k scalar, aff affinity) scalar {
	switch aff {
	case affNumeric:
		return toNumeric(k)
	case affText:
		return constText(k)
	}
	return k
}

// fieldConst returns the specialised comparison of field f (left) with
// constant k (already converted for f's affinity), with its selection loop
// when batch is set; ok is false when f is dynamic. A Num or Str field is
// NULL or one scalar kind, so every case but "same kind as k" has a result
// fixed at Compile time.
func fieldConst[T any](s *cmpSpec, f *Field[T], k scalar, batch bool) (_ comparison[T], ok bool) {
	nullRes := s.eval(scalar{}, k)
	var cmp comparison[T]
	switch f.Type {
	case TypeNumber:
		if k.kind != KindNumber {
			return comparison[T]{chain: plain(nonNull(f.Num, nullRes, s.eval(numScalar(0), k)))}, true
		}
		cmp.chain = fieldOp(f.Num, s.op, k.num, nullRes)
		if batch {
			cmp.sel = selectOp(f.Num, s.op, k.num, nullRes)
		}
	case TypeString:
		if k.kind != KindString {
			return comparison[T]{chain: plain(nonNull(f.Str, nullRes, s.eval(strScalar(""), k)))}, true
		}
		cmp.chain = fieldOp(f.Str, s.op, k.str, nullRes)
		if batch {
			cmp.sel = selectOp(f.Str, s.op, k.str, nullRes)
		}
	default:
		return comparison[T]{}, false
	}
	return cmp, true
}

// nonNull returns a predicate whose result depends only on whether the
// field is NULL.
func nonNull[T, V any](get func(T) (V, bool), nullRes, valueRes bool) Predicate[T] {
	if nullRes == valueRes {
		return constant[T](nullRes)
	}
	return func(e T) bool {
		if _, ok := get(e); ok {
			return valueRes
		}
		return nullRes
	}
}

// fieldOp returns the chain for get(e) op k, where a NULL field yields
// nullRes. Each operator has its own closures so that the comparison is
// inline; with a continuation, the closure goes on to next(e) when the
// comparison does not decide the join (true for &&, false for ||).
func fieldOp[T any, V float64 | string](get func(T) (V, bool), op Op, k V, nullRes bool) chain[T] {
	return func(next Predicate[T], and bool) Predicate[T] {
		if next == nil {
			switch op {
			case Eq:
				return func(e T) bool {
					if v, ok := get(e); ok {
						return v == k
					}
					return nullRes
				}
			case Neq:
				return func(e T) bool {
					if v, ok := get(e); ok {
						return v != k
					}
					return nullRes
				}
			case Lt:
				return func(e T) bool { v, ok := get(e); return ok && v < k }
			case Lte:
				return func(e T) bool { v, ok := get(e); return ok && v <= k }
			case Gt:
				return func(e T) bool { v, ok := get(e); return ok && v > k }
			default: // Gte
				return func(e T) bool { v, ok := get(e); return ok && v >= k }
			}
		}
		switch op {
		case Eq:
			return func(e T) bool {
				r := nullRes
				if v, ok := get(e); ok {
					r = v == k
				}
				if r == and {
					return next(e)
				}
				return r
			}
		case Neq:
			return func(e T) bool {
				r := nullRes
				if v, ok := get(e); ok {
					r = v != k
				}
				if r == and {
					return next(e)
				}
				return r
			}
		case Lt:
			return func(e T) bool {
				v, ok := get(e)
				if r := ok && v < k; r != and {
					return r
				}
				return next(e)
			}
		case Lte:
			return func(e T) bool {
				v, ok := get(e)
				if r := ok && v <= k; r != and {
					return r
				}
				return next(e)
			}
		case Gt:
			return func(e T) bool {
				v, ok := get(e)
				if r := ok && v > k; r != and {
					return r
				}
				return next(e)
			}
		default: // Gte
			return func(e T) bool {
				v, ok := get(e)
				if r := ok && v >= k; r != and {
					return r
				}
				return next(e)
			}
		}
	}
}

// likeSpec evaluates ~ / !~ on scalars. With a constant pattern m is set;
// otherwise the right scalar is the text wrapped in '%'.
type likeSpec struct {
	m   *likeMatcher
	neg bool
}

func (s *likeSpec) eval(l, r scalar) bool {
	if l.null() || (s.m == nil && r.null()) {
		return false
	}
	var lb, rb [32]byte
	var matched bool
	switch {
	case s.m != nil && l.kind == KindString:
		matched = matchLike(s.m, l.str)
	case s.m != nil:
		matched = matchLike(s.m, l.appendText(lb[:0]))
	case l.kind == KindString && r.kind == KindString:
		matched = likeMatch(l.str, r.str, true)
	default:
		matched = likeMatch(l.appendText(lb[:0]), r.appendText(rb[:0]), true)
	}
	return matched != s.neg
}

// like compiles ~ and !~ and their any-of variants.
func (c *compiler[T]) like(x *Compare, l, r *operand[T]) chain[T] {
	if l.param || r.param {
		return plain(paramLike(x, l, r))
	}
	s := &likeSpec{neg: x.Op == NotLike}
	if r.field == nil {
		if r.c.null() {
			return plain(constant[T](false)) // LIKE NULL is NULL
		}
		var buf [32]byte
		s.m = newLikeMatcher(string(r.c.appendText(buf[:0])))
	}
	if l.field == nil {
		if r.field == nil {
			return plain(constant[T](general(s, l, r, x.AnyOf)(*new(T))))
		}
		return plain(general(s, l, r, x.AnyOf))
	}
	if !c.fast || s.m == nil {
		return plain(general(s, l, r, x.AnyOf))
	}
	m, neg := s.m, s.neg
	switch f := l.field; f.Type {
	case TypeString:
		get := f.Str
		if m.shape == likeContains {
			lit := m.lit
			return plain(func(e T) bool {
				v, ok := get(e)
				return ok && containsFold(v, lit) != neg
			})
		}
		return plain(func(e T) bool {
			v, ok := get(e)
			return ok && matchLike(m, v) != neg
		})
	case TypeNumber:
		get := f.Num
		return plain(func(e T) bool {
			v, ok := get(e)
			if !ok {
				return false
			}
			var buf [32]byte
			return matchLike(m, numScalar(v).appendText(buf[:0])) != neg
		})
	}
	return plain(general(s, l, r, x.AnyOf))
}

// paramLike compiles ~ or !~ with a Param field on a side: a Param on the
// right is a constant pattern, matched as like does with a constant.
func paramLike[T any](x *Compare, l, r *operand[T]) Predicate[T] {
	lv, rv := l.value(), r.value()
	neg, each := x.Op == NotLike, x.AnyOf
	return func(e T) bool {
		s := likeSpec{neg: neg}
		b := rv(e)
		if r.field == nil || r.param {
			k := scalarOf(b)
			if k.null() {
				return false // LIKE NULL is NULL
			}
			var buf [32]byte
			s.m = newLikeMatcher(string(k.appendText(buf[:0])))
		}
		return evalValues(&s, lv(e), b, each)
	}
}

// MacroValue returns the value of the macro name (a date macro of
// DateMacro, as text, or one of the numbers @second, @minute, @hour,
// @day, @month, @weekday and @year) at time now, in UTC: what Compile
// gives the macro, for a resolver that binds macros itself (see
// Options.ParamMacros).
func MacroValue(name string, now time.Time) (Value, bool) {
	k, ok := macro(name, now.UTC())
	if !ok {
		return Value{}, false
	}
	return scalarValue(k), true
}

// macroLayout is how dates are stored and compared: as text.
const macroLayout = "2006-01-02 15:04:05.000Z"

// macro returns the value of a macro at time now (UTC).
func macro(name string, now time.Time) (scalar, bool) {
	if text, ok := DateMacro(name, now); ok {
		return strScalar(text), true
	}
	y, m, d := now.Date()
	switch name {
	case "@second":
		return numScalar(float64(now.Second())), true
	case "@minute":
		return numScalar(float64(now.Minute())), true
	case "@hour":
		return numScalar(float64(now.Hour())), true
	case "@day":
		return numScalar(float64(d)), true
	case "@month":
		return numScalar(float64(m)), true
	case "@weekday":
		return numScalar(float64(now.Weekday())), true
	case "@year":
		return numScalar(float64(y)), true
	}
	return scalar{}, false
}

// DateMacro returns the value of the date macro name (@now, @yesterday,
// @tomorrow, @todayStart, @todayEnd, @monthStart, @monthEnd, @yearStart,
// @yearEnd) at time now, in UTC, as the stored date text
// "YYYY-MM-DD HH:MM:SS.mmmZ". Callers that bind dates to their own columns
// use it to compute exactly what Compile would.
func DateMacro(name string, now time.Time) (string, bool) {
	now = now.UTC()
	y, m, d := now.Date()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	end := func(t time.Time) time.Time { return t.Add(-time.Millisecond) }
	var t time.Time
	switch name {
	case "@now":
		t = now
	case "@yesterday":
		t = now.AddDate(0, 0, -1)
	case "@tomorrow":
		t = now.AddDate(0, 0, 1)
	case "@todayStart":
		t = day(y, m, d)
	case "@todayEnd":
		t = end(day(y, m, d+1))
	case "@monthStart":
		t = day(y, m, 1)
	case "@monthEnd":
		t = end(day(y, m+1, 1))
	case "@yearStart":
		t = day(y, 1, 1)
	case "@yearEnd":
		t = end(day(y+1, 1, 1))
	default:
		return "", false
	}
	return t.Format(macroLayout), true
}
