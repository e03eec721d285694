package filterlang

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// tokenKind identifies the kind of a token.
type tokenKind uint8

const (
	tokEOF    tokenKind = iota // end of input
	tokIdent                   // level, data.status, @now, null
	tokNumber                  // 12, -1.5
	tokString                  // 'text' or "text"
	tokCmp                     // a comparison operator, with or without '?'
	tokAnd                     // &&
	tokOr                      // ||
	tokLParen                  // (
	tokRParen                  // )
)

// token is one lexical token. lit is the token's source text; the other
// fields hold its decoded value.
type token struct {
	kind  tokenKind
	pos   int     // byte offset of the first character
	lit   string  // source text (empty for tokEOF)
	op    Op      // tokCmp, tokAnd, tokOr
	anyOf bool    // tokCmp written with '?'
	str   string  // tokString: the value without quotes and escapes
	num   float64 // tokNumber
}

// describe names the token for an error message.
func (t token) describe() string {
	if t.kind == tokEOF {
		return "end of input"
	}
	return strconv.Quote(clip(t.lit))
}

// clip shortens source text quoted in an error message.
func clip(lit string) string {
	const max = 32
	if len(lit) <= max {
		return lit
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(lit[cut]) {
		cut--
	}
	return lit[:cut] + "…"
}

// cmpOps maps every valid run of sign characters to its operator.
var cmpOps = map[string]struct {
	op    Op
	anyOf bool
}{
	"=": {Eq, false}, "!=": {Neq, false}, "<": {Lt, false}, "<=": {Lte, false},
	">": {Gt, false}, ">=": {Gte, false}, "~": {Like, false}, "!~": {NotLike, false},
	"?=": {Eq, true}, "?!=": {Neq, true}, "?<": {Lt, true}, "?<=": {Lte, true},
	"?>": {Gt, true}, "?>=": {Gte, true}, "?~": {Like, true}, "?!~": {NotLike, true},
}

// scanner splits a filter into tokens. It stops at the first error.
type scanner struct {
	src string
	pos int // offset of the next unread byte
}

// peek returns the byte at offset pos+i, or 0 past the end.
func (s *scanner) peek(i int) byte {
	if s.pos+i < len(s.src) {
		return s.src[s.pos+i]
	}
	return 0
}

// acceptRun consumes bytes while ok reports true for them.
func (s *scanner) acceptRun(ok func(byte) bool) {
	for s.pos < len(s.src) && ok(s.src[s.pos]) {
		s.pos++
	}
}

// errorf returns a *SyntaxError at offset pos.
func (s *scanner) errorf(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

// skipSpace skips whitespace and // comments.
func (s *scanner) skipSpace() *SyntaxError {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		case '/':
			if s.peek(1) != '/' {
				return s.errorf(s.pos, `unexpected "/" (comments start with "//")`)
			}
			if i := strings.IndexByte(s.src[s.pos:], '\n'); i >= 0 {
				s.pos += i + 1
			} else {
				s.pos = len(s.src)
			}
		default:
			return nil
		}
	}
	return nil
}

// scan returns the next token.
func (s *scanner) scan() (token, *SyntaxError) {
	if err := s.skipSpace(); err != nil {
		return token{}, err
	}
	start := s.pos
	if start >= len(s.src) {
		return token{kind: tokEOF, pos: start}, nil
	}
	tok := token{pos: start}
	switch c := s.src[start]; {
	case isIdentStart(c):
		s.pos++
		s.acceptRun(isIdentChar)
		tok.kind, tok.lit = tokIdent, s.src[start:s.pos]
		if last := tok.lit[len(tok.lit)-1]; last == '.' || last == ':' {
			return tok, s.errorf(s.pos-1, "identifier %q cannot end with %q", clip(tok.lit), last)
		}
		if len(tok.lit) == 1 && (c == '@' || c == '#' || c == '_') {
			return tok, s.errorf(start, "invalid identifier %q", tok.lit)
		}
		if s.peek(0) == '(' {
			return tok, s.errorf(start, "functions are not supported: %s(", clip(tok.lit))
		}
	case isDigit(c) || c == '-' || c == '.' && isDigit(s.peek(1)):
		if c == '-' {
			s.pos++
		}
		s.acceptRun(isNumberRun)
		tok.kind, tok.lit = tokNumber, s.src[start:s.pos]
		if !validNumber(tok.lit) {
			return tok, s.errorf(start, "invalid number %q (want digits with an optional '-' and fraction, as in -12.5)", clip(tok.lit))
		}
		// Validated digits only fail to parse by overflowing to ±Inf;
		// underflow quietly rounds to zero, as SQLite does.
		f, err := strconv.ParseFloat(tok.lit, 64)
		if err != nil {
			return tok, s.errorf(start, "number %q out of range", clip(tok.lit))
		}
		tok.num = f
	case c == '\'' || c == '"':
		return s.scanString(c)
	case isSign(c):
		s.acceptRun(isSign)
		tok.lit = s.src[start:s.pos]
		op, ok := cmpOps[tok.lit]
		if !ok {
			return tok, s.errorf(start, "invalid operator %q", clip(tok.lit))
		}
		tok.kind, tok.op, tok.anyOf = tokCmp, op.op, op.anyOf
	case c == '&' || c == '|':
		s.acceptRun(func(b byte) bool { return b == '&' || b == '|' })
		tok.lit = s.src[start:s.pos]
		switch tok.lit {
		case "&&":
			tok.kind, tok.op = tokAnd, And
		case "||":
			tok.kind, tok.op = tokOr, Or
		default:
			return tok, s.errorf(start, "invalid operator %q (want && or ||)", clip(tok.lit))
		}
	case c == '(':
		s.pos++
		tok.kind, tok.lit = tokLParen, "("
	case c == ')':
		s.pos++
		tok.kind, tok.lit = tokRParen, ")"
	default:
		r, _ := utf8.DecodeRuneInString(s.src[start:])
		if r == utf8.RuneError {
			return tok, s.errorf(start, "unexpected byte %#x", c)
		}
		return tok, s.errorf(start, "unexpected character %q", r)
	}
	return tok, nil
}

// scanString scans a string quoted with q. A backslash escapes the quote
// character and only it; every other backslash stands for itself.
func (s *scanner) scanString(q byte) (token, *SyntaxError) {
	start := s.pos
	s.pos++
	escaped := false
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case q:
			s.pos++
			tok := token{kind: tokString, pos: start, lit: s.src[start:s.pos]}
			tok.str = tok.lit[1 : len(tok.lit)-1]
			if escaped {
				tok.str = strings.ReplaceAll(tok.str, `\`+string(q), string(q))
			}
			return tok, nil
		case '\\':
			if s.peek(1) == q {
				escaped = true
				s.pos++
			}
		}
		s.pos++
	}
	return token{}, s.errorf(start, "unterminated string (missing closing %c)", q)
}

func isIdentStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '@' || c == '#'
}

func isIdentChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_' || c == '.' || c == ':'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isNumberRun reports the bytes a number token swallows before it is
// validated, so that "1e3", "0x10" and "5." are reported whole.
func isNumberRun(c byte) bool {
	return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '.'
}

func isSign(c byte) bool {
	return c == '=' || c == '!' || c == '<' || c == '>' || c == '~' || c == '?'
}

// validNumber reports whether lit matches -?[0-9]+(\.[0-9]+)?.
func validNumber(lit string) bool {
	lit = strings.TrimPrefix(lit, "-")
	intPart, frac, hasDot := strings.Cut(lit, ".")
	return allDigits(intPart) && (!hasDot || allDigits(frac))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
