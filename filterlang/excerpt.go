package filterlang

import (
	stdhtml "html"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Element classes for Excerpt, as PocketBase's :excerpt modifier sorts them.
var (
	// excerptSkip elements are dropped with their content.
	excerptSkip = setOf("head", "style", "script", "iframe", "embed", "applet", "object", "svg",
		"img", "picture", "dialog", "template", "button", "form", "textarea", "input", "select", "option")
	// excerptInline elements run into the surrounding text; every other
	// element separates its content from its neighbours with a space.
	excerptInline = setOf("a", "abbr", "acronym", "b", "bdo", "big", "br", "button", "cite", "code",
		"em", "i", "label", "q", "small", "span", "strong", "strike", "sub", "sup", "time")
	// htmlVoid elements have no content and no end tag.
	htmlVoid = setOf("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
		"param", "source", "track", "wbr")
	// htmlRaw elements hold raw text up to their end tag; tags inside are text.
	htmlRaw = setOf("script", "style", "textarea", "title", "iframe", "xmp", "noembed", "noframes")
)

func setOf(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// Excerpt returns a plain-text excerpt of an HTML fragment, as the
// :excerpt(maxLength, withEllipsis) modifier of `fields` does: tags are
// stripped (the content of script, style, img, form and the other
// non-text elements is dropped; elements other than inline ones such as b,
// a or span separate the text around them with a space), entities are
// decoded, runs of ASCII whitespace collapse to one space and the result is
// trimmed. When it is longer than maxLength characters (runes), it is cut
// to maxLength runes, trimmed again, and "..." is appended if withEllipsis
// is set. A maxLength below 1 yields "".
func Excerpt(html string, maxLength int, withEllipsis bool) string {
	if maxLength < 1 {
		return ""
	}
	x := excerpter{max: maxLength}
	x.walk(html)
	out := x.out[:x.solidLen]
	if x.solid <= maxLength {
		return string(out)
	}
	cut := 0
	for n := 0; n < maxLength; n++ {
		_, w := utf8.DecodeRune(out[cut:])
		cut += w
	}
	s := strings.TrimRightFunc(string(out[:cut]), unicode.IsSpace)
	if withEllipsis {
		s += "..."
	}
	return s
}

// excerpter collects the text of an HTML fragment. Leading whitespace is
// never written and trailing whitespace is cut off at the end, so out is
// the trimmed, collapsed text so far.
type excerpter struct {
	max      int
	out      []byte
	pending  bool   // an ASCII space is due before the next character
	count    int    // runes in out
	solid    int    // runes in out up to its last non-space rune
	solidLen int    // bytes in out up to its last non-space rune
	skip     int    // nesting depth inside a skipped element
	skipName string // the skipped element
}

// full reports whether enough text is collected: more than max runes
// before trailing whitespace, so the excerpt will be cut and later text
// cannot change it.
func (x *excerpter) full() bool { return x.solid > x.max }

// space records a separator.
func (x *excerpter) space() {
	if len(x.out) > 0 {
		x.pending = true
	}
}

// text appends text, decoding entities if decode is set and collapsing
// ASCII whitespace.
func (x *excerpter) text(s string, decode bool) {
	if x.skip > 0 || s == "" {
		return
	}
	if decode && strings.IndexByte(s, '&') >= 0 {
		s = stdhtml.UnescapeString(s)
	}
	for _, r := range s {
		switch r {
		case ' ', '\t', '\n', '\f', '\r':
			x.space()
			continue
		}
		if len(x.out) == 0 && unicode.IsSpace(r) {
			continue // leading whitespace is trimmed
		}
		if x.pending {
			x.out = append(x.out, ' ')
			x.count++
			x.pending = false
		}
		x.out = utf8.AppendRune(x.out, r)
		x.count++
		if !unicode.IsSpace(r) {
			x.solid, x.solidLen = x.count, len(x.out)
		}
	}
}

// walk scans src: text, tags, comments and raw-text element content.
func (x *excerpter) walk(s string) {
	for i := 0; i < len(s) && !x.full(); {
		if s[i] != '<' {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				j = len(s) - i
			}
			x.text(s[i:i+j], true)
			i += j
			continue
		}
		rest := s[i+1:]
		switch {
		case rest != "" && isASCIILetter(rest[0]):
			name, end, selfClosing := scanTag(s, i+1)
			i = end
			x.start(name, selfClosing)
			if htmlRaw[name] && !selfClosing {
				j := rawEnd(s, i, name)
				// Only title (RCDATA) decodes entities in its content.
				x.text(s[i:j], name == "title")
				i = j
			}
		case len(rest) > 1 && rest[0] == '/' && isASCIILetter(rest[1]):
			name, end, _ := scanTag(s, i+2)
			i = end
			x.end(name)
		case strings.HasPrefix(rest, "!--"):
			if j := strings.Index(s[i+2:], "-->"); j >= 0 {
				i += 2 + j + 3
			} else {
				i = len(s)
			}
		case rest != "" && (rest[0] == '!' || rest[0] == '?' || rest[0] == '/'):
			// Doctype, processing instruction, "</>" or another bogus
			// comment: ignored up to the next '>'.
			if j := strings.IndexByte(s[i+1:], '>'); j >= 0 {
				i += 1 + j + 1
			} else {
				i = len(s)
			}
		default:
			x.text("<", false)
			i++
		}
	}
}

// start handles a start tag.
func (x *excerpter) start(name string, selfClosing bool) {
	switch {
	case x.skip > 0:
		if name == x.skipName && !htmlVoid[name] && !selfClosing {
			x.skip++
		}
	case excerptSkip[name]:
		if !htmlVoid[name] && !(selfClosing && name == "svg") {
			x.skip, x.skipName = 1, name
		}
	case !excerptInline[name]:
		x.space()
	}
}

// end handles an end tag.
func (x *excerpter) end(name string) {
	switch {
	case x.skip > 0:
		if name == x.skipName {
			x.skip--
		}
	case !excerptInline[name] && !excerptSkip[name]:
		x.space()
	}
}

// scanTag reads a tag whose name starts at s[i]: it returns the lowercase
// name, the offset after the closing '>' (or len(s) when the tag is not
// closed) and whether the tag ends in "/>". Quoted attribute values may
// contain '>'.
func scanTag(s string, i int) (name string, end int, selfClosing bool) {
	j := i
	for j < len(s) && !isSpace(s[j]) && s[j] != '/' && s[j] != '>' {
		j++
	}
	name = strings.ToLower(s[i:j])
	for j < len(s) {
		switch s[j] {
		case '>':
			return name, j + 1, j > i && s[j-1] == '/'
		case '=':
			j++
			for j < len(s) && isSpace(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				k := strings.IndexByte(s[j+1:], s[j])
				if k < 0 {
					return name, len(s), false
				}
				j += 1 + k + 1
			}
		default:
			j++
		}
	}
	return name, len(s), false
}

// rawEnd returns the offset of the end tag "</name" that closes raw text
// starting at i, or len(s).
func rawEnd(s string, i int, name string) int {
	for {
		j := strings.Index(s[i:], "</")
		if j < 0 {
			return len(s)
		}
		k := i + j + 2
		if len(s)-k >= len(name) && strings.EqualFold(s[k:k+len(name)], name) {
			if k+len(name) == len(s) {
				return i + j
			}
			if c := s[k+len(name)]; isSpace(c) || c == '/' || c == '>' {
				return i + j
			}
		}
		i = k
	}
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
