package filterlang

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Type is the declared type of a field that a caller exposes to filters.
// It selects which getter of Field is used and, for columns, the SQLite
// type affinity the field has in comparisons.
type Type uint8

// The field types.
const (
	TypeString  Type = iota + 1 // text; read with Field.Str
	TypeNumber                  // number; read with Field.Num
	TypeDynamic                 // any Value; read with Field.Dyn
)

// Kind is the kind of a runtime Value.
type Kind uint8

// The value kinds.
const (
	KindNull   Kind = iota // missing attribute or JSON null
	KindNumber             // a number; JSON true and false are 1 and 0
	KindString             // a string
	KindArray              // a JSON array
	KindObject             // a JSON object
)

// Value is a dynamic value, typically a JSON attribute. Booleans are the
// numbers 1 and 0, as SQLite's JSON_EXTRACT returns them.
//
// For KindString, Str is the string. For KindObject, Str is the object's
// canonical (compact) JSON text. For KindArray, Arr holds the elements and
// Str may hold the array's canonical JSON text; when Str is empty the text is
// rendered from Arr on the rare occasions it is needed (a plain, not any-of,
// operator on an array), which allocates.
type Value struct {
	Kind Kind
	Num  float64 // for KindNumber
	Str  string  // for KindString and KindObject; optional for KindArray
	Arr  []Value // for KindArray
}

// affinity is the SQLite type affinity of an operand. Literals, JSON
// attributes and expressions have none; typed columns have text or numeric
// affinity, which converts the other operand of a comparison first (SQLite
// "Datatypes In SQLite" §4.2).
type affinity uint8

const (
	affNone affinity = iota
	affText
	affNumeric
)

// scalar is an operand as one comparison sees it: NULL, a number or text.
// Arrays and objects are text (their JSON). numText marks a number that
// text affinity turned into text; its text is formatNum(num), produced on
// demand so that the conversion does not allocate.
type scalar struct {
	kind    Kind // KindNull, KindNumber or KindString
	num     float64
	str     string
	numText bool
}

func (x scalar) null() bool { return x.kind == KindNull }

// textual reports whether x compares as text.
func (x scalar) textual() bool { return x.kind == KindString || x.numText }

func numScalar(f float64) scalar { return scalar{kind: KindNumber, num: f} }
func strScalar(s string) scalar  { return scalar{kind: KindString, str: s} }

// scalarOf reduces a Value to a scalar.
func scalarOf(v Value) scalar {
	switch v.Kind {
	case KindNumber:
		return numScalar(v.Num)
	case KindString, KindObject:
		return strScalar(v.Str)
	case KindArray:
		return strScalar(arrayText(v))
	}
	return scalar{}
}

// withAffinity applies SQLite's conversions before comparing l (affinity la)
// with r (affinity ra): numeric affinity converts numeric-looking text on the
// other side, and text affinity turns a number on a side without affinity
// into text.
func withAffinity(l, r scalar, la, ra affinity) (scalar, scalar) {
	switch {
	case la == affNumeric && ra != affNumeric:
		r = toNumeric(r)
	case ra == affNumeric && la != affNumeric:
		l = toNumeric(l)
	case la == affText && ra == affNone:
		r = toText(r)
	case ra == affText && la == affNone:
		l = toText(l)
	}
	return l, r
}

func toNumeric(x scalar) scalar {
	if x.kind == KindString {
		if f, ok := sqlNumber(x.str); ok {
			return numScalar(f)
		}
	}
	return x
}

func toText(x scalar) scalar {
	if x.kind == KindNumber {
		x.numText = true
	}
	return x
}

// constText is toText for constants: it does the conversion once, so that
// the result is an ordinary string.
func constText(x scalar) scalar {
	if x.kind == KindNumber {
		return strScalar(formatNum(x.num))
	}
	return x
}

// sqlNumber reports whether s is text SQLite's numeric affinity converts to
// a number: optional surrounding whitespace around [+-]? digits with an
// optional fraction and exponent (".5" and "5." included, hex excluded).
func sqlNumber(s string) (float64, bool) {
	s = strings.Trim(s, " \t\n\v\f\r")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(s) && isDigit(s[i]); i++ {
		digits++
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && isDigit(s[i]); i++ {
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := i
		for ; i < len(s) && isDigit(s[i]); i++ {
		}
		if i == exp {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// compareScalars orders two non-NULL scalars the way SQLite does: every
// number before every text, numbers by value, text byte-wise (the BINARY
// collation).
func compareScalars(a, b scalar) int {
	at, bt := a.textual(), b.textual()
	switch {
	case !at && !bt:
		switch {
		case a.num < b.num:
			return -1
		case a.num > b.num:
			return 1
		}
		return 0
	case !at:
		return -1
	case !bt:
		return 1
	case !a.numText && !b.numText:
		return strings.Compare(a.str, b.str)
	}
	var ab, bb [32]byte
	return bytes.Compare(a.appendText(ab[:0]), b.appendText(bb[:0]))
}

// appendText appends x's text form to buf.
func (x scalar) appendText(buf []byte) []byte {
	if x.kind == KindNumber {
		return strconv.AppendFloat(buf, x.num, 'f', -1, 64)
	}
	return append(buf, x.str...)
}

// arrayText returns the canonical JSON text of an array Value.
func arrayText(v Value) string {
	if v.Str != "" {
		return v.Str
	}
	return string(appendJSON(nil, v))
}

// appendJSON appends the compact JSON text of v, as SQLite's JSON
// functions print it.
func appendJSON(buf []byte, v Value) []byte {
	switch v.Kind {
	case KindNumber:
		if v.Num == math.Trunc(v.Num) && math.Abs(v.Num) < 1e21 {
			return strconv.AppendFloat(buf, v.Num, 'f', -1, 64)
		}
		return strconv.AppendFloat(buf, v.Num, 'g', -1, 64)
	case KindString:
		return appendJSONString(buf, v.Str)
	case KindObject:
		if v.Str == "" {
			return append(buf, "{}"...)
		}
		return append(buf, v.Str...)
	case KindArray:
		if v.Str != "" {
			return append(buf, v.Str...)
		}
		buf = append(buf, '[')
		for i, e := range v.Arr {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSON(buf, e)
		}
		return append(buf, ']')
	}
	return append(buf, "null"...)
}

func appendJSONString(buf []byte, s string) []byte {
	const hex = "0123456789abcdef"
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			buf = append(buf, '\\', c)
		case c == '\n':
			buf = append(buf, '\\', 'n')
		case c == '\r':
			buf = append(buf, '\\', 'r')
		case c == '\t':
			buf = append(buf, '\\', 't')
		case c < 0x20:
			buf = append(buf, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			buf = append(buf, c)
		default:
			r, w := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && w == 1 {
				buf = append(buf, `\ufffd`...)
			} else {
				buf = append(buf, s[i:i+w]...)
			}
			i += w
			continue
		}
		i++
	}
	return append(buf, '"')
}
