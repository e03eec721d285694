package logstore

import (
	"strings"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"
)

// The message of a request log is usually derived ("METHOD URL", see
// flagDerivedMsg and flagUnescMsg) and then not held by the index at all:
// filters and sorts on message derive it from the method and url columns.
// This file keeps that cheap: a filter reading only message is memoised per
// url id (filter.go); a filter derives messages into a buffer of its scan
// (msgScratch) rather than allocating each; the message sort compares
// "METHOD", " " and "URL" piecewise without building the message at all.

// msgScratch derives the messages of one scanning goroutine's filter into
// a buffer it reuses. The string message returns aliases that buffer: it
// is valid only until the next call, which is all a filter predicate needs
// (it compares the value and lets it go; evaluating a field twice on the
// same row writes the same bytes again). It must not be kept or shared.
type msgScratch struct {
	buf []byte
}

// message returns the message of row r, as index.message does.
func (ms *msgScratch) message(x *index, r row) string {
	c, i := r.c, r.i
	f := c.flagsAt(i)
	if f&msgFlags == 0 || f&rowOther != 0 {
		return x.dict.strs[c.strAt(colMessage, i)]
	}
	ms.buf = appendMessage(ms.buf[:0], f&msgFlags, x.dict.strs[c.strAt(colMethod, i)], x.dict.strs[c.strAt(colURL, i)])
	return unsafe.String(unsafe.SliceData(ms.buf), len(ms.buf))
}

// msgCacheSize is the number of slots of a msgCache (a power of two).
const msgCacheSize = 1024

// msgCache is a direct-mapped cache of unescaped urls, keyed by url id, for
// the message sort; it is safe for concurrent use (a slot holds an
// immutable entry, replaced as a whole). One lives for one query.
type msgCache struct {
	slots [msgCacheSize]atomic.Pointer[msgCacheEntry]
}

type msgCacheEntry struct {
	url uint32
	s   string
}

// unescaped returns unescapeURL of the url with id url.
func (c *msgCache) unescaped(x *index, url uint32) string {
	p := &c.slots[(uint64(url)*0x9E3779B97F4A7C15)>>54]
	if e := p.Load(); e != nil && e.url == url {
		return e.s
	}
	s, _ := unescapeURL(x.dict.strs[url])
	p.Store(&msgCacheEntry{url: url, s: s})
	return s
}

// msgParts returns the message of row r as the concatenation of up to three
// parts, without building it.
func (c *msgCache) msgParts(x *index, r row) [3]string {
	rc, i := r.c, r.i
	f := rc.flagsAt(i)
	if f&msgFlags == 0 || f&rowOther != 0 {
		return [3]string{x.dict.strs[rc.strAt(colMessage, i)]}
	}
	method, url := x.dict.strs[rc.strAt(colMethod, i)], ""
	if f&flagUnescMsg != 0 {
		url = c.unescaped(x, rc.strAt(colURL, i))
	} else {
		url = x.dict.strs[rc.strAt(colURL, i)]
	}
	return [3]string{method, " ", url}
}

// messageCmp returns the comparison of the sort field message: the
// messages' byte order, computed without building a derived message.
func (x *index) messageCmp() func(a, b row) int {
	c := new(msgCache)
	return func(a, b row) int {
		fa, fb := a.c.flagsAt(a.i), b.c.flagsAt(b.i)
		if fa&(msgFlags|rowOther) == flagDerivedMsg && fb&(msgFlags|rowOther) == flagDerivedMsg {
			// Both "METHOD URL" with the same method: the urls decide.
			ma, mb := a.c.strAt(colMethod, a.i), b.c.strAt(colMethod, b.i)
			ua, ub := a.c.strAt(colURL, a.i), b.c.strAt(colURL, b.i)
			if ma == mb {
				if ua == ub {
					return 0
				}
				return strings.Compare(x.dict.strs[ua], x.dict.strs[ub])
			}
		}
		return compareParts(c.msgParts(x, a), c.msgParts(x, b))
	}
}

// compareParts compares the concatenations of a's and b's parts.
func compareParts(a, b [3]string) int {
	i, j := 0, 0
	pa, pb := a[0], b[0]
	for {
		for pa == "" && i < len(a)-1 {
			i++
			pa = a[i]
		}
		for pb == "" && j < len(b)-1 {
			j++
			pb = b[j]
		}
		switch {
		case pa == "" && pb == "":
			return 0
		case pa == "":
			return -1
		case pb == "":
			return 1
		}
		n := min(len(pa), len(pb))
		if c := strings.Compare(pa[:n], pb[:n]); c != 0 {
			return c
		}
		pa, pb = pa[n:], pb[n:]
	}
}

// appendMessage appends the derived message with the given message flags
// (one of msgFlags) to b: method + " " + url, with url unescaped as
// unescapeURL does for flagUnescMsg. It allocates only to replace invalid
// UTF-8.
func appendMessage(b []byte, flags byte, method, url string) []byte {
	b = append(append(b, method...), ' ')
	if flags&flagUnescMsg == 0 || strings.IndexByte(url, '%') < 0 || !validEscapes(url) {
		return append(b, url...)
	}
	start := len(b)
	for i := 0; i < len(url); i++ {
		c := url[i]
		if c == '%' {
			c = unhex(url[i+1])<<4 | unhex(url[i+2])
			i += 2
		}
		b = append(b, c)
	}
	if !utf8.Valid(b[start:]) {
		v := strings.ToValidUTF8(string(b[start:]), "\uFFFD")
		b = append(b[:start], v...)
	}
	return b
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
