package filterlang

import (
	"math/bits"
	"unicode/utf8"
)

// The LIKE operator (~ and !~) follows SQLite's LIKE with ESCAPE '\':
// '%' matches any run of characters, '_' exactly one character (a UTF-8
// sequence), '\' makes the next character literal, a pattern ending in a
// lone '\' matches nothing, and ASCII letters match case-insensitively
// while every other byte must be equal.

// text is a string or a byte slice; the matchers take either so that a
// number's text can be matched from a stack buffer.
type text interface{ ~string | ~[]byte }

// likeShape classifies a constant pattern so that the common shapes run
// as plain case-insensitive string searches.
type likeShape uint8

const (
	likeGeneral  likeShape = iota // anything else: interpret pat
	likeContains                  // %lit%
	likePrefix                    // lit%
	likeSuffix                    // %lit
	likeExact                     // lit
	likeAny                       // %: every text matches
	likeNever                     // ends in a lone '\'
)

// likeMatcher is a LIKE pattern compiled once at Compile time.
type likeMatcher struct {
	shape likeShape
	lit   string // the literal of the fast shapes, ASCII-lowercased
	pat   string // the pattern, for likeGeneral
}

// newLikeMatcher returns the matcher for the right-hand constant of ~. As in
// PocketBase, a value without an unescaped '%' means "contains": it is
// matched literally as a substring, where '\' before '\', '%' or '_' stands
// for that character. A value with an unescaped '%' is a LIKE pattern.
func newLikeMatcher(v string) *likeMatcher {
	if !hasUnescapedPercent(v) {
		return &likeMatcher{shape: likeContains, lit: lowerASCII(unescapeContains(v))}
	}
	return compileLike(v)
}

// hasUnescapedPercent reports whether v holds a '%' that no backslash
// escapes (a backslash escapes the character after it, including another
// backslash).
func hasUnescapedPercent(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '%':
			return true
		}
	}
	return false
}

// unescapeContains turns a "contains" value into the literal it stands for.
// PocketBase escapes '\', '%' and '_' unless a backslash already precedes
// them; its escaper leaves every second character of a run such as "__"
// unescaped (a wildcard), which we take for a slip and do not copy: here
// every such character is literal.
func unescapeContains(v string) string {
	buf := make([]byte, 0, len(v))
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			if n := v[i+1]; n == '\\' || n == '%' || n == '_' {
				c = n
				i++
			}
		}
		buf = append(buf, c)
	}
	return string(buf)
}

// compileLike classifies pattern p.
func compileLike(p string) *likeMatcher {
	var (
		lit         []byte
		lead, trail bool // a '%' before / after the literal
		litDone     bool // the literal is followed by a '%'
		general     bool
		danglingEsc bool
	)
	for i := 0; i < len(p) && !general; i++ {
		c := p[i]
		switch c {
		case '%':
			if len(lit) == 0 && !litDone {
				lead = true
			} else {
				litDone, trail = true, true
			}
			continue
		case '_':
			general = true
			continue
		case '\\':
			if i+1 == len(p) {
				danglingEsc = true
				continue
			}
			i++
			c = p[i]
		}
		if litDone {
			general = true // a second literal: %a%b%
			continue
		}
		lit = append(lit, lowerByte(c))
	}
	m := &likeMatcher{lit: string(lit), pat: p}
	switch {
	case danglingEsc:
		m.shape = likeNever
	case general:
		m.shape = likeGeneral
	case lead && len(lit) == 0:
		m.shape = likeAny
	case lead && trail:
		m.shape = likeContains
	case lead:
		m.shape = likeSuffix
	case trail:
		m.shape = likePrefix
	default:
		m.shape = likeExact
	}
	return m
}

// matchLike reports whether s matches m.
func matchLike[S text](m *likeMatcher, s S) bool {
	switch m.shape {
	case likeContains:
		return containsFold(s, m.lit)
	case likePrefix:
		return len(s) >= len(m.lit) && equalFold(s[:len(m.lit)], m.lit)
	case likeSuffix:
		return len(s) >= len(m.lit) && equalFold(s[len(s)-len(m.lit):], m.lit)
	case likeExact:
		return len(s) == len(m.lit) && equalFold(s, m.lit)
	case likeAny:
		return true
	case likeNever:
		return false
	}
	return likeMatch(s, m.pat, false)
}

// likeMatch interprets pattern p against s; with wrap it matches
// '%' + p + '%', the pattern that a field on the right of ~ stands for.
// The classic greedy algorithm: on a mismatch, let the last '%' swallow
// one more character and retry from there.
func likeMatch[S, P text](s S, p P, wrap bool) bool {
	if wrap && danglingEscape(p) {
		// The trailing '%' is escaped, so it is a literal: rare enough to
		// build the pattern.
		return likeMatch(s, "%"+string(p)+"%", false)
	}
	si, pi := 0, 0
	starPi, starSi := -1, 0
	if wrap {
		starPi = 0 // the leading '%'
	}
	for {
		if pi < len(p) {
			switch c := p[pi]; c {
			case '%':
				pi++
				starPi, starSi = pi, si
				continue
			case '_':
				if si < len(s) {
					si += runeLen(s[si:])
					pi++
					continue
				}
			case '\\':
				if pi+1 == len(p) {
					return false
				}
				if si < len(s) && lowerByte(s[si]) == lowerByte(p[pi+1]) {
					si++
					pi += 2
					continue
				}
			default:
				if si < len(s) && lowerByte(s[si]) == lowerByte(c) {
					si++
					pi++
					continue
				}
			}
		} else if si == len(s) || wrap {
			return true // with wrap, the trailing '%' takes the rest
		}
		if starPi < 0 || starSi >= len(s) {
			return false
		}
		starSi += runeLen(s[starSi:])
		if starPi < len(p) {
			// The '%' is followed by a plain byte: skip to where it occurs.
			if c := p[starPi]; c != '%' && c != '_' && c != '\\' {
				c = lowerByte(c)
				for starSi < len(s) && lowerByte(s[starSi]) != c {
					starSi++
				}
			}
		}
		si, pi = starSi, starPi
	}
}

// danglingEscape reports whether p ends in a backslash that escapes
// nothing.
func danglingEscape[P text](p P) bool {
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' {
			if i+1 == len(p) {
				return true
			}
			i++
		}
	}
	return false
}

// runeLen returns the length of the UTF-8 sequence at the start of s
// (1 for an invalid byte), as SQLite steps over characters.
func runeLen[S text](s S) int {
	if s[0] < utf8.RuneSelf {
		return 1
	}
	return runeLenSlow(s)
}

func runeLenSlow[S text](s S) int {
	var buf [utf8.UTFMax]byte
	n := copy(buf[:], s)
	_, w := utf8.DecodeRune(buf[:n])
	return w
}

// containsFold reports whether s contains lit (ASCII-lowercase) ignoring
// ASCII case. It tests eight start positions at a time (SWAR: a 64-bit
// word as eight byte lanes) for lit's first and last bytes together, and
// compares the whole of lit only at the rare starts that pass both. On the
// benchmark's short strings this measured faster than probing the first
// byte alone, whose many candidates cost mispredicted branches, and than
// probing three bytes, which costs more arithmetic than it saves.
func containsFold[S text](s S, lit string) bool {
	n := len(lit)
	if n == 0 {
		return true
	}
	last := len(s) - n // the last possible start
	if last < 7 {
		if last < 0 {
			return false
		}
		return containsFoldShort(s, lit)
	}
	p := n - 1
	f0, w0 := foldMask(lit[0]), uint64(lit[0])*lanes
	fp, wp := foldMask(lit[p]), uint64(lit[p])*lanes
	for i := 0; i <= last; i += 8 {
		// The lanes are the starts base … base+7. The last word may
		// overlap the one before, whose lanes (those before i) are masked
		// off. The loads end at base+p+7 <= last+n-1, the end of s.
		base := min(i, last-7)
		m := maybeZero((load64(s, base)|f0)^w0) & maybeZero((load64(s, base+p)|fp)^wp)
		m &^= 1<<(uint(i-base)*8) - 1
		for ; m != 0; m &= m - 1 {
			j := base + bits.TrailingZeros64(m)>>3
			if equalFold(s[j:j+n], lit) {
				return true
			}
		}
	}
	return false
}

// containsFoldShort is containsFold for a short s, byte by byte.
func containsFoldShort[S text](s S, lit string) bool {
	first, rest, fold := lit[0], lit[1:], byte(foldMask(lit[0]))
	for i := 0; i <= len(s)-len(lit); i++ {
		if s[i]|fold == first && equalFold(s[i+1:i+len(lit)], rest) {
			return true
		}
	}
	return false
}

// foldMask returns the mask that, OR-ed into a byte, makes both cases of
// the lowercase letter c equal to c: 0x20 in every lane for a letter (no
// other byte turns into a lowercase letter that way), 0 otherwise.
func foldMask(c byte) uint64 {
	if 'a' <= c && c <= 'z' {
		return 0x20 * lanes
	}
	return 0
}

const lanes = 0x0101010101010101 // 1 in every byte lane

// maybeZero returns a word with the high bit set in every lane of x that is
// zero, and perhaps in some lanes above a zero lane (where the borrow of
// the subtraction reaches): a filter whose hits are verified.
func maybeZero(x uint64) uint64 {
	return (x - lanes) &^ x & (0x80 * lanes)
}

// load64 reads s[i:i+8] as a little-endian word (the compiler turns this
// into one load).
func load64[S text](s S, i int) uint64 {
	b := s[i : i+8] // one bounds check; the constant indexes need none
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// equalFold reports whether s equals lit (ASCII-lowercase, same length)
// ignoring ASCII case.
func equalFold[S text](s S, lit string) bool {
	for i := 0; i < len(lit); i++ {
		if lowerByte(s[i]) != lit[i] {
			return false
		}
	}
	return true
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = lowerByte(c)
	}
	return string(b)
}
