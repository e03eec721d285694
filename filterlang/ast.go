package filterlang

import (
	"strconv"
	"strings"
)

// Op is an operator of the filter language: a logical join (And, Or) in a
// Binary node or a comparison (Eq … NotLike) in a Compare node.
type Op uint8

// The operators. The any-of variants (`?=` …) are not separate operators:
// they are Compare nodes with AnyOf set.
const (
	And     Op = iota + 1 // &&
	Or                    // ||
	Eq                    // =
	Neq                   // !=
	Lt                    // <
	Lte                   // <=
	Gt                    // >
	Gte                   // >=
	Like                  // ~
	NotLike               // !~
)

var opText = [...]string{
	And: "&&", Or: "||", Eq: "=", Neq: "!=", Lt: "<", Lte: "<=", Gt: ">", Gte: ">=",
	Like: "~", NotLike: "!~",
}

// String returns the operator as written in a filter ("&&", "!=", "~" …).
func (op Op) String() string {
	if int(op) < len(opText) && opText[op] != "" {
		return opText[op]
	}
	return "Op(" + strconv.Itoa(int(op)) + ")"
}

// precedence returns the binding strength of a logical operator; && binds
// tighter than ||. A comparison operator, which joins operands and not
// expressions, has precedence 0.
func (op Op) precedence() int {
	switch op {
	case And:
		return 2
	case Or:
		return 1
	}
	return 0
}

// lowestPrec is the precedence of the loosest join (||): the parser reads a
// whole expression by climbing from it.
const lowestPrec = 1

// Expr is a parsed filter expression: a *Binary or a *Compare.
//
// String returns the canonical form of the expression: tokens separated by
// single spaces, strings quoted, numbers in their shortest decimal form and
// parentheses only where the tree needs them. Parsing the canonical form
// yields the same tree (positions aside). Pos returns the byte offset of the
// expression's first token in the source.
type Expr interface {
	String() string
	Pos() int
	expr()
}

// Operand is one side of a comparison: an Ident, a Str or a Num.
type Operand interface {
	String() string
	Pos() int
	operand()
}

// Binary is a logical join: X && Y or X || Y.
type Binary struct {
	Op    Op   // And or Or
	X, Y  Expr // left and right operands
	OpPos int  // byte offset of the operator
}

// Compare is a comparison Left Op Right. AnyOf marks the ?-variant
// (`?=`, `?!~` …).
type Compare struct {
	Op          Op   // Eq, Neq, Lt, Lte, Gt, Gte, Like or NotLike
	AnyOf       bool // written with a leading '?'
	Left, Right Operand
	OpPos       int // byte offset of the operator
}

// Ident is an identifier operand: a field name ("level", "data.status"), a
// macro ("@now") or one of the keywords null, true and false. Which of these
// it is is decided by Compile, not by Parse.
type Ident struct {
	Name    string
	NamePos int // byte offset of the name
}

// Str is a quoted string operand; Value holds the text with escapes removed.
type Str struct {
	Value    string
	ValuePos int // byte offset of the opening quote
}

// Num is a number operand.
type Num struct {
	Value    float64
	ValuePos int // byte offset of the first character ('-' or a digit)
}

func (*Binary) expr()  {}
func (*Compare) expr() {}

func (Ident) operand() {}
func (Str) operand()   {}
func (Num) operand()   {}

// Pos returns the offset of the first token of X.
func (b *Binary) Pos() int { return b.X.Pos() }

// Pos returns the offset of the left operand.
func (c *Compare) Pos() int { return c.Left.Pos() }

// Pos returns the offset of the identifier.
func (x Ident) Pos() int { return x.NamePos }

// Pos returns the offset of the opening quote.
func (x Str) Pos() int { return x.ValuePos }

// Pos returns the offset of the number.
func (x Num) Pos() int { return x.ValuePos }

// String returns the canonical form of b (see Expr).
func (b *Binary) String() string {
	var sb strings.Builder
	writeExpr(&sb, b)
	return sb.String()
}

// String returns the canonical form of c (see Expr).
func (c *Compare) String() string {
	var sb strings.Builder
	writeExpr(&sb, c)
	return sb.String()
}

// String returns the identifier as written.
func (x Ident) String() string { return x.Name }

// String returns the value quoted so that Parse reads it back unchanged:
// in double quotes unless the value holds more double than single quotes.
// The only escape is a backslash before the quote character.
func (x Str) String() string { return quote(x.Value) }

// String returns the shortest decimal form that reads back as the same
// float64 (no exponent: 1e21 is written out in full).
func (x Num) String() string { return formatNum(x.Value) }

func writeExpr(sb *strings.Builder, e Expr) {
	switch e := e.(type) {
	case *Binary:
		p := e.Op.precedence()
		// Parse builds left-leaning trees, so a join on the left needs
		// parentheses only when it binds less tightly, and a join on the
		// right needs them unless it binds more tightly.
		writeOperand(sb, e.X, childPrec(e.X) < p)
		sb.WriteByte(' ')
		sb.WriteString(e.Op.String())
		sb.WriteByte(' ')
		writeOperand(sb, e.Y, childPrec(e.Y) <= p)
	case *Compare:
		sb.WriteString(e.Left.String())
		sb.WriteByte(' ')
		if e.AnyOf {
			sb.WriteByte('?')
		}
		sb.WriteString(e.Op.String())
		sb.WriteByte(' ')
		sb.WriteString(e.Right.String())
	case nil:
		sb.WriteString("<nil>")
	default:
		sb.WriteString(e.String())
	}
}

// childPrec is the precedence of e as a child of a join; comparisons bind
// tighter than any join.
func childPrec(e Expr) int {
	if b, ok := e.(*Binary); ok {
		return b.Op.precedence()
	}
	return 3
}

func writeOperand(sb *strings.Builder, e Expr, paren bool) {
	if paren {
		sb.WriteByte('(')
		writeExpr(sb, e)
		sb.WriteByte(')')
		return
	}
	writeExpr(sb, e)
}

// quote returns s as a filter string literal (see Str.String).
func quote(s string) string {
	q := byte('"')
	if strings.Count(s, `"`) > strings.Count(s, `'`) {
		q = '\''
	}
	var sb strings.Builder
	sb.Grow(len(s) + 2)
	sb.WriteByte(q)
	for i := 0; i < len(s); i++ {
		if s[i] == q {
			sb.WriteByte('\\')
		}
		sb.WriteByte(s[i])
	}
	sb.WriteByte(q)
	return sb.String()
}

// formatNum formats a number the way the language writes it and the way
// a number turns into text (for LIKE and for text affinity).
func formatNum(f float64) string {
	return strconv.FormatFloat(f, 'f', -1, 64)
}
