package filterlang

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Fields is a parsed `fields` projection: which keys of a JSON response to
// keep, and which to shorten with the excerpt modifier. The zero Fields (and
// a nil *Fields) keeps everything.
type Fields struct {
	root *fieldNode
}

// fieldNode is one level of the projection tree.
type fieldNode struct {
	keep     bool                  // a path ends here: keep the value whole
	mod      *excerptMod           // applied to the kept value (keep only)
	children map[string]*fieldNode // deeper paths, by key; "*" is the wildcard
}

// excerptMod is a parsed :excerpt(maxLength, withEllipsis) modifier.
type excerptMod struct {
	max      int
	ellipsis bool
}

// apply shortens v if it is a string; other values pass unchanged.
func (m *excerptMod) apply(v any) any {
	if s, ok := v.(string); ok && m != nil {
		return Excerpt(s, m.max, m.ellipsis)
	}
	return v
}

// ParseFields parses a `fields` value: comma-separated paths, each of
// dot-separated keys, where the key "*" (last in its path) stands for every
// key of its object that no other path names. A key is a run of any bytes
// but whitespace, control characters and . , : ( ) ' " ` \ *. A path may end in the
// modifier :excerpt(maxLength) or :excerpt(maxLength, withEllipsis), with
// maxLength a positive integer and withEllipsis one of true, false, 1, 0 (in
// any case). Whitespace around paths and modifier arguments is ignored, and
// so are empty items ("a,,b"). Anything else (an unknown modifier, wrong
// arguments, an empty key as in "a..b", quotes, unbalanced parentheses) is
// reported as a *SyntaxError. When two items name the same path, the later
// one wins, with its modifier or lack of one.
func ParseFields(s string) (*Fields, error) {
	p := &fieldsParser{src: s}
	f := &Fields{root: &fieldNode{}}
	for {
		p.skipSpace()
		if p.pos < len(s) && s[p.pos] != ',' {
			if err := p.parseItem(f.root); err != nil {
				return nil, err
			}
			p.skipSpace()
		}
		if p.pos == len(s) {
			return f, nil
		}
		if s[p.pos] != ',' {
			return nil, p.errorf(p.pos, `expected "," or ":", found %s`, p.describe())
		}
		p.pos++
	}
}

// fieldsParser is a cursor over a fields value.
type fieldsParser struct {
	src string
	pos int
}

func (p *fieldsParser) errorf(pos int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Offset: pos, Msg: fmt.Sprintf(format, args...)}
}

// describe names the character at pos for an error message.
func (p *fieldsParser) describe() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	r := []rune(p.src[p.pos:min(len(p.src), p.pos+4)])[0]
	return strconv.QuoteRune(r)
}

func (p *fieldsParser) skipSpace() {
	for p.pos < len(p.src) && isSpace(p.src[p.pos]) {
		p.pos++
	}
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isKeyByte reports whether c may appear in a key: anything but
// whitespace, control characters and the punctuation of the syntax.
func isKeyByte(c byte) bool {
	if c <= ' ' || c == 0x7f {
		return false
	}
	return !strings.ContainsRune(".,:()'\"`\\*", rune(c))
}

// parseItem parses path (":" modifier)? and adds it to root.
func (p *fieldsParser) parseItem(root *fieldNode) error {
	n := root
	for {
		start := p.pos
		var key string
		if p.pos < len(p.src) && p.src[p.pos] == '*' {
			p.pos++
			key = "*"
		} else {
			for p.pos < len(p.src) && isKeyByte(p.src[p.pos]) {
				p.pos++
			}
			key = p.src[start:p.pos]
			if key == "" {
				return p.errorf(p.pos, "expected field name, found %s", p.describe())
			}
		}
		if n.children == nil {
			n.children = make(map[string]*fieldNode)
		}
		child := n.children[key]
		if child == nil {
			child = &fieldNode{}
			n.children[key] = child
		}
		n = child
		if p.pos == len(p.src) || p.src[p.pos] != '.' {
			break
		}
		if key == "*" {
			return p.errorf(start, `"*" must be the last key of a path`)
		}
		p.pos++
	}
	n.keep, n.mod = true, nil
	if p.pos < len(p.src) && p.src[p.pos] == ':' {
		p.pos++
		mod, err := p.parseModifier()
		if err != nil {
			return err
		}
		n.mod = mod
	}
	return nil
}

// parseModifier parses excerpt(maxLength[, withEllipsis]).
func (p *fieldsParser) parseModifier() (*excerptMod, error) {
	start := p.pos
	for p.pos < len(p.src) && ('a' <= p.src[p.pos] && p.src[p.pos] <= 'z' || 'A' <= p.src[p.pos] && p.src[p.pos] <= 'Z') {
		p.pos++
	}
	name := p.src[start:p.pos]
	switch {
	case name == "":
		return nil, p.errorf(p.pos, "expected modifier name, found %s", p.describe())
	case name != "excerpt":
		return nil, p.errorf(start, "unknown modifier %q (the only modifier is excerpt)", name)
	}
	if p.pos == len(p.src) || p.src[p.pos] != '(' {
		return nil, p.errorf(p.pos, `expected "(" after excerpt, found %s`, p.describe())
	}
	open := p.pos
	p.pos++
	var args []string
	var argPos []int
	for {
		p.skipSpace()
		a := p.pos
		for p.pos < len(p.src) && p.src[p.pos] != ',' && p.src[p.pos] != ')' && !isSpace(p.src[p.pos]) {
			p.pos++
		}
		if p.pos == a {
			if p.pos < len(p.src) && p.src[p.pos] == ')' && len(args) == 0 {
				return nil, p.errorf(p.pos, "excerpt needs 1 or 2 arguments (maxLength, withEllipsis), found none")
			}
			return nil, p.errorf(p.pos, "expected excerpt argument, found %s", p.describe())
		}
		args, argPos = append(args, p.src[a:p.pos]), append(argPos, a)
		p.skipSpace()
		if p.pos == len(p.src) {
			return nil, p.errorf(p.pos, `expected ")" to close "(" at offset %d, found end of input`, open)
		}
		if p.src[p.pos] == ')' {
			p.pos++
			break
		}
		if p.src[p.pos] != ',' {
			return nil, p.errorf(p.pos, `expected "," or ")", found %s`, p.describe())
		}
		p.pos++
	}
	if len(args) > 2 {
		return nil, p.errorf(argPos[2], "excerpt takes at most 2 arguments (maxLength, withEllipsis), found %d", len(args))
	}
	if !allDigits(args[0]) {
		return nil, p.errorf(argPos[0], "excerpt maxLength %q is not a positive integer", args[0])
	}
	max, err := strconv.Atoi(args[0])
	if err != nil || max <= 0 {
		return nil, p.errorf(argPos[0], "excerpt maxLength %q is not a positive integer", args[0])
	}
	mod := &excerptMod{max: max}
	if len(args) == 2 {
		switch strings.ToLower(args[1]) {
		case "true", "1":
			mod.ellipsis = true
		case "false", "0":
		default:
			return nil, p.errorf(argPos[1], "excerpt withEllipsis %q is not true, false, 1 or 0", args[1])
		}
	}
	return mod, nil
}

// String returns the canonical form of f: its paths in sorted order, each
// with its modifier, ParseFields(f.String()) yields the same projection.
func (f *Fields) String() string {
	if f == nil || f.root == nil {
		return ""
	}
	var items []string
	var walk func(n *fieldNode, prefix string)
	walk = func(n *fieldNode, prefix string) {
		keys := make([]string, 0, len(n.children))
		for k := range n.children {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			c := n.children[k]
			path := prefix + k
			if c.keep {
				item := path
				if c.mod != nil {
					item += ":excerpt(" + strconv.Itoa(c.mod.max) + "," + strconv.FormatBool(c.mod.ellipsis) + ")"
				}
				items = append(items, item)
			}
			walk(c, path+".")
		}
	}
	walk(f.root, "")
	return strings.Join(items, ",")
}

// Apply prunes v, a value as encoding/json decodes into an `any` (numbers
// may be float64 or json.Number), and returns the result; it may modify v in
// place. An object keeps the keys some path names, or all keys when "*" is
// among the paths; a key whose path ends there keeps its whole value (with
// the excerpt modifier applied to strings), and a key with longer paths is
// pruned in turn. An array has each of its object elements pruned. Other
// values, including a scalar met where a path expects an object, are
// returned unchanged; missing keys stay absent. A Fields with no paths
// keeps everything, as PocketBase does.
func (f *Fields) Apply(v any) any {
	if f == nil || f.root == nil || len(f.root.children) == 0 {
		return v
	}
	return f.root.prune(v)
}

// prune applies the children of n to v.
func (n *fieldNode) prune(v any) any {
	switch v := v.(type) {
	case map[string]any:
		star := n.children["*"]
		for k, x := range v {
			c := n.children[k]
			switch {
			case c == nil && star != nil:
				v[k] = star.mod.apply(x)
			case c == nil:
				delete(v, k)
			case c.keep:
				v[k] = c.mod.apply(x)
			default:
				v[k] = c.prune(x)
			}
		}
		return v
	case []any:
		for i, x := range v {
			if _, ok := x.(map[string]any); ok {
				v[i] = n.prune(x)
			}
		}
		return v
	case []map[string]any:
		for _, x := range v {
			n.prune(x)
		}
		return v
	}
	return v
}
