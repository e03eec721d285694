package filterlang

import (
	"fmt"
	"strconv"
)

// Limits on filter expressions. Filters arrive in query strings, so every
// dimension of the input is bounded.
const (
	// MaxLength is the longest filter Parse accepts, in bytes
	// (PocketBase's bound).
	MaxLength = 3500
	// MaxComparisons is the most comparisons one filter may hold
	// (PocketBase's bound).
	MaxComparisons = 200
	// MaxDepth is the deepest parenthesis nesting Parse accepts.
	// PocketBase has no bound; 50 levels is far beyond any hand-written
	// filter and keeps the parser's recursion and the compiled predicate
	// shallow.
	MaxDepth = 50
)

// SyntaxError reports a malformed filter, sort or fields expression, or a
// filter that Compile rejects (an unknown field).
type SyntaxError struct {
	Offset int    // byte offset into the source where the problem is
	Msg    string // what was expected or what is wrong
}

// Error returns the error as "filterlang: offset N: message".
func (e *SyntaxError) Error() string {
	return "filterlang: offset " + strconv.Itoa(e.Offset) + ": " + e.Msg
}

// Parse parses a filter expression. The grammar and the meaning of each
// construct are described in the package documentation. Parse stops at the
// first problem and reports it as a *SyntaxError.
func Parse(src string) (Expr, error) {
	e, err := parse(src, true)
	if err != nil {
		return nil, err
	}
	return e, nil
}

// parse parses src. checkLen is false only when tests re-parse a canonical
// form, which may be longer than the source it came from.
func parse(src string, checkLen bool) (Expr, *SyntaxError) {
	if checkLen && len(src) > MaxLength {
		return nil, &SyntaxError{Offset: MaxLength, Msg: fmt.Sprintf("filter too long: %d bytes (max %d)", len(src), MaxLength)}
	}
	p := &parser{sc: scanner{src: src}}
	if err := p.next(); err != nil {
		return nil, err
	}
	if p.tok.kind == tokEOF {
		return nil, p.errorf(p.tok.pos, "empty filter: expected operand, found end of input")
	}
	e, err := p.parseBinary(lowestPrec)
	if err != nil {
		return nil, err
	}
	switch p.tok.kind {
	case tokEOF:
		return e, nil
	case tokRParen:
		return nil, p.errorf(p.tok.pos, `unbalanced ")": no "(" to close`)
	}
	return nil, p.errorf(p.tok.pos, "expected && or ||, found %s", p.tok.describe())
}

// parser is a recursive-descent parser over the scanner's tokens with one
// token of lookahead; the joins are parsed by precedence climbing
// (parseBinary).
type parser struct {
	sc    scanner
	tok   token // current token
	depth int   // open parentheses
	ncmp  int   // comparisons so far
}

// next advances to the next token.
func (p *parser) next() *SyntaxError {
	tok, err := p.sc.scan()
	if err != nil {
		return err
	}
	p.tok = tok
	return nil
}

func (p *parser) errorf(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

// parseBinary parses a chain of unary expressions joined by operators
// that bind at least as tightly as prec1, by precedence climbing (as
// go/parser's parseBinaryExpr): each operator's right operand is parsed
// with the next higher precedence, so tighter operators nest to the
// right and operators of equal precedence associate to the left. Start
// with prec1 = lowestPrec to parse a whole expression.
func (p *parser) parseBinary(prec1 int) (Expr, *SyntaxError) {
	x, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		// Only the joins have a precedence: the scanner sets tok.op for
		// && and || (And, Or) and for comparisons, whose precedence is 0.
		op := p.tok.op
		oprec := op.precedence()
		if oprec < prec1 {
			return x, nil
		}
		pos := p.tok.pos
		if err := p.next(); err != nil {
			return nil, err
		}
		y, err := p.parseBinary(oprec + 1)
		if err != nil {
			return nil, err
		}
		x = &Binary{Op: op, X: x, Y: y, OpPos: pos}
	}
}

// parseUnary parses "(" expr ")" | comparison.
func (p *parser) parseUnary() (Expr, *SyntaxError) {
	if p.tok.kind != tokLParen {
		return p.parseCompare()
	}
	open := p.tok.pos
	if p.depth++; p.depth > MaxDepth {
		return nil, p.errorf(open, "parentheses nested too deeply (max %d)", MaxDepth)
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	x, err := p.parseBinary(lowestPrec)
	if err != nil {
		return nil, err
	}
	switch p.tok.kind {
	case tokRParen:
	case tokEOF:
		return nil, p.errorf(p.tok.pos, `expected ")" to close "(" at offset %d, found end of input`, open)
	default:
		return nil, p.errorf(p.tok.pos, `expected &&, || or ")", found %s`, p.tok.describe())
	}
	p.depth--
	if err := p.next(); err != nil {
		return nil, err
	}
	return x, nil
}

// parseCompare parses operand op operand.
func (p *parser) parseCompare() (Expr, *SyntaxError) {
	start := p.tok.pos
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	if p.ncmp++; p.ncmp > MaxComparisons {
		return nil, p.errorf(start, "too many comparisons (max %d)", MaxComparisons)
	}
	if p.tok.kind != tokCmp {
		return nil, p.errorf(p.tok.pos, "expected comparison operator, found %s", p.tok.describe())
	}
	c := &Compare{Op: p.tok.op, AnyOf: p.tok.anyOf, Left: left, OpPos: p.tok.pos}
	if err := p.next(); err != nil {
		return nil, err
	}
	if c.Right, err = p.parseOperand(); err != nil {
		return nil, err
	}
	return c, nil
}

// parseOperand parses an identifier, a number or a string.
func (p *parser) parseOperand() (Operand, *SyntaxError) {
	var x Operand
	switch t := p.tok; t.kind {
	case tokIdent:
		x = Ident{Name: t.lit, NamePos: t.pos}
	case tokNumber:
		x = Num{Value: t.num, ValuePos: t.pos}
	case tokString:
		x = Str{Value: t.str, ValuePos: t.pos}
	default:
		return nil, p.errorf(t.pos, "expected operand, found %s", t.describe())
	}
	if err := p.next(); err != nil {
		return nil, err
	}
	return x, nil
}
