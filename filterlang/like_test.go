package filterlang

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// naiveLike is an obviously correct (exponential) LIKE matcher used as an
// oracle: '%' any run, '_' one rune, '\' escapes, ASCII case folding.
func naiveLike(s, p string) bool {
	if p == "" {
		return s == ""
	}
	switch p[0] {
	case '%':
		for i := 0; ; {
			if naiveLike(s[i:], p[1:]) {
				return true
			}
			if i == len(s) {
				return false
			}
			_, w := utf8.DecodeRuneInString(s[i:])
			i += w
		}
	case '_':
		if s == "" {
			return false
		}
		_, w := utf8.DecodeRuneInString(s)
		return naiveLike(s[w:], p[1:])
	case '\\':
		if len(p) == 1 {
			return false
		}
		p = p[1:]
	}
	return s != "" && lowerByte(s[0]) == lowerByte(p[0]) && naiveLike(s[1:], p[1:])
}

func TestLikePatterns(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
		shape      likeShape
	}{
		{"abc%", "ABCdef", true, likePrefix},
		{"abc%", "xabc", false, likePrefix},
		{"%abc", "xxABC", true, likeSuffix},
		{"%abc", "abcx", false, likeSuffix},
		{"%abc%", "xAbCx", true, likeContains},
		{"%%abc%%", "abc", true, likeContains},
		{"abc", "ABC", true, likeExact},
		{"abc", "abcd", false, likeExact},
		{"", "", true, likeExact},
		{"", "a", false, likeExact},
		{"%", "", true, likeAny},
		{"%%", "anything", true, likeAny},
		{"a_c", "abc", true, likeGeneral},
		{"a_c", "aéc", true, likeGeneral},
		{"a_c", "ac", false, likeGeneral},
		{"a%b%c", "aXXbYYc", true, likeGeneral},
		{"a%b%c", "aXXcYYb", false, likeGeneral},
		{`a\%`, "a%", true, likeExact},
		{`a\%`, "ab", false, likeExact},
		{`\_%`, "_x", true, likePrefix},
		{`\_%`, "xx", false, likePrefix},
		{`a\\%`, `a\b`, true, likePrefix},
		{`abc\`, "abc", false, likeNever},
		{`%\`, "", false, likeNever},
		{"%é%", "CAFÉ", false, likeContains},
		{"%é%", "café", true, likeContains},
		{"%É%", "café", false, likeContains},
		{"_%_", "ab", true, likeGeneral},
		{"_%_", "é", false, likeGeneral},
		{"%_%_", "éé", true, likeGeneral},
	}
	for _, tt := range tests {
		m := compileLike(tt.pattern)
		if m.shape != tt.shape {
			t.Errorf("compileLike(%q).shape = %d, want %d", tt.pattern, m.shape, tt.shape)
		}
		if got := matchLike(m, tt.s); got != tt.want {
			t.Errorf("%q LIKE %q = %v, want %v", tt.s, tt.pattern, got, tt.want)
		}
		if got := matchLike(m, []byte(tt.s)); got != tt.want {
			t.Errorf("[]byte %q LIKE %q = %v, want %v", tt.s, tt.pattern, got, tt.want)
		}
		if got := naiveLike(tt.s, tt.pattern); got != tt.want {
			t.Errorf("oracle: %q LIKE %q = %v, want %v", tt.s, tt.pattern, got, tt.want)
		}
	}
}

func TestLikeContainsValue(t *testing.T) {
	tests := []struct {
		value, lit string
		percent    bool
	}{
		{"abc", "abc", false},
		{"a_b", "a_b", false},
		{`a\_b`, "a_b", false},
		{`a\%b`, "a%b", false},
		{`a\\b`, `a\b`, false},
		{`a\b`, `a\b`, false},
		{`a\`, `a\`, false},
		{"__", "__", false},
		{"a%", "", true},
		{`\\%`, "", true},
		{`\%`, "%", false},
	}
	for _, tt := range tests {
		if got := hasUnescapedPercent(tt.value); got != tt.percent {
			t.Errorf("hasUnescapedPercent(%q) = %v, want %v", tt.value, got, tt.percent)
		}
		if tt.percent {
			continue
		}
		m := newLikeMatcher(tt.value)
		if m.shape != likeContains || m.lit != tt.lit {
			t.Errorf("newLikeMatcher(%q) = %+v, want contains %q", tt.value, *m, tt.lit)
		}
	}
}

// TestLikeRandom checks the compiled and the interpreted matchers against
// the oracle on random short patterns and strings.
func TestLikeRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alpha := []string{"a", "B", "b", "%", "_", `\`, "é", "x"}
	gen := func(n int) string {
		var s string
		for range rng.IntN(n) {
			s += alpha[rng.IntN(len(alpha))]
		}
		return s
	}
	for range 200000 {
		p, s := gen(7), gen(7)
		want := naiveLike(s, p)
		if got := matchLike(compileLike(p), s); got != want {
			t.Fatalf("%q LIKE %q: compiled %v, oracle %v", s, p, got, want)
		}
		if got := likeMatch(s, p, false); got != want {
			t.Fatalf("%q LIKE %q: interpreted %v, oracle %v", s, p, got, want)
		}
		if got, want := likeMatch(s, p, true), naiveLike(s, "%"+p+"%"); got != want {
			t.Fatalf("%q LIKE '%%'||%q||'%%': interpreted %v, oracle %v", s, p, got, want)
		}
	}
}

func naiveContainsFold(s, lit string) bool {
	for i := 0; i+len(lit) <= len(s); i++ {
		ok := true
		for j := 0; j < len(lit); j++ {
			if lowerByte(s[i+j]) != lit[j] {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// TestContainsFoldRandom checks the word-at-a-time search against a plain
// loop, with bytes chosen to trip lane arithmetic: 0x00, 0x01, 0x7f, 0x80,
// 0xff, '@' and '`' (which differ from 'A' and 'a' in the 0x20 bit only
// with a borrow), and both letter cases.
func TestContainsFoldRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alpha := []byte{0, 1, 0x7f, 0x80, 0xff, '@', '`', 'a', 'A', 'b', 'B', '[', '{', '1'}
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alpha[rng.IntN(len(alpha))]
		}
		return string(b)
	}
	for range 300000 {
		s := gen(rng.IntN(40))
		lit := lowerASCII(gen(1 + rng.IntN(10)))
		if rng.IntN(4) == 0 && len(s) > 0 { // a literal taken from s: more matches
			a := rng.IntN(len(s))
			lit = lowerASCII(s[a : a+1+rng.IntN(len(s)-a)])
		}
		if got, want := containsFold(s, lit), naiveContainsFold(s, lit); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, lit, got, want)
		}
		if got, want := containsFold([]byte(s), lit), naiveContainsFold(s, lit); got != want {
			t.Fatalf("containsFold([]byte %q, %q) = %v, want %v", s, lit, got, want)
		}
	}
}

// FuzzContainsFold checks the word-at-a-time search against a plain loop
// on any text and literal.
func FuzzContainsFold(f *testing.F) {
	f.Add("GET /api/collections/users/records", "USERS")
	f.Add("0123456789abcdefXYZ", "fxy")
	f.Add("`@[{aAzZ\x7f\x80\xff", "@[")
	f.Add("short", "or")
	f.Fuzz(func(t *testing.T, s, lit string) {
		lit = lowerASCII(lit)
		want := naiveContainsFold(s, lit)
		if got := containsFold(s, lit); got != want {
			t.Fatalf("containsFold(%q, %q) = %v, want %v", s, lit, got, want)
		}
		if got := containsFold([]byte(s), lit); got != want {
			t.Fatalf("containsFold([]byte %q, %q) = %v, want %v", s, lit, got, want)
		}
	})
}
