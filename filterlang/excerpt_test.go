package filterlang

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestExcerptPocketBase(t *testing.T) {
	// What PocketBase v0.31.0 answers for this input.
	const src = `<p>Hello   <b>wor</b>ld</p><script>var x = "<p>no</p>";</script><div>Second&nbsp;para</div><img src=x>çüé text`
	tests := []struct {
		max      int
		ellipsis bool
		want     string
	}{
		{100, false, "Hello world Second\u00a0para çüé text"},
		{11, false, "Hello world"},
		{12, true, "Hello world..."},
		{29, true, "Hello world Second\u00a0para çüé t..."},
	}
	for _, tt := range tests {
		if got := Excerpt(src, tt.max, tt.ellipsis); got != tt.want {
			t.Errorf("Excerpt(src, %d, %v) = %q, want %q", tt.max, tt.ellipsis, got, tt.want)
		}
	}
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name, src string
		max       int
		ellipsis  bool
		want      string
	}{
		{"plain", "hello", 10, true, "hello"},
		{"exact length no ellipsis", "hello", 5, true, "hello"},
		{"cut", "hello world", 5, true, "hello..."},
		{"cut trims", "hello world", 6, false, "hello"},
		{"runes not bytes", "çüéçüé", 3, true, "çüé..."},
		{"blocks separate", "<p>a</p><p>b</p>", 10, false, "a b"},
		{"inline joins", "<b>wor</b>ld", 10, false, "world"},
		{"br is inline", "a<br>b", 10, false, "ab"},
		{"hr separates", "a<hr>b", 10, false, "a b"},
		{"whitespace collapses", " a \t\n\r\f b ", 10, false, "a b"},
		{"vertical tab kept inside", "a\vb", 10, false, "a\vb"},
		{"nbsp not collapsed", "a&nbsp;&nbsp;b", 10, false, "a\u00a0\u00a0b"},
		{"nbsp trimmed at edges", "&nbsp;a&nbsp;", 10, false, "a"},
		{"entities", "&lt;tag&gt; &amp; &#39;q&#x27; &eacute;", 30, false, "<tag> & 'q' é"},
		{"skipped elements", "a<style>x{}</style><select><option>o</option></select><button>b</button><form>f<input>g</form>z", 30, false, "az"},
		{"skipped nested same name", "a<object><object>x</object>y</object>b", 30, false, "ab"},
		{"svg self-closing", "a<svg/>b", 10, false, "ab"},
		{"svg content", "a<svg><text>no</text></svg>b", 10, false, "ab"},
		{"head", "<html><head><title>T</title></head><body>x</body></html>", 10, false, "x"},
		{"textarea raw", "a<textarea><b>no</b></textarea>b", 10, false, "ab"},
		{"script with tags", "a<script>if (a</b) {}</script>b", 10, false, "ab"},
		{"script unclosed", "a<script>x", 10, false, "a"},
		{"title raw text", "<title>a<b>c</title>", 10, false, "a<b>c"},
		{"comments", "a<!-- <p>x</p> -->b<!---->c<!-->d", 10, false, "abcd"},
		{"doctype", "<!DOCTYPE html>a", 10, false, "a"},
		{"processing instruction", "<?xml x?>a", 10, false, "a"},
		{"lone lt", "a < b <3", 10, false, "a < b <3"},
		{"quoted gt in attribute", `<a title="x>y">link</a>`, 10, false, "link"},
		{"unclosed tag", "a<p class='x", 10, false, "a"},
		{"upper-case tags", "A<P>B</P><SCRIPT>x</SCRIPT>C", 10, false, "A B C"},
		{"empty", "", 10, true, ""},
		{"only tags", "<p></p><div></div>", 10, true, ""},
		{"zero max", "abc", 0, true, ""},
		{"negative max", "abc", -1, true, ""},
		{"long input stops early", strings.Repeat("<p>word</p>", 100000), 20, true, "word word word word..."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Excerpt(tt.src, tt.max, tt.ellipsis); got != tt.want {
				t.Errorf("Excerpt(%q, %d, %v) = %q, want %q", tt.src, tt.max, tt.ellipsis, got, tt.want)
			}
		})
	}
}

// TestExcerptEarlyStop checks that stopping the scan early never changes
// the result: every prefix-length limit gives what the full text gives.
func TestExcerptEarlyStop(t *testing.T) {
	srcs := []string{
		"<p>Hello   <b>wor</b>ld</p><div>Second&nbsp;para</div>çüé text",
		"a&nbsp;&nbsp;&nbsp;<p> </p>&nbsp;b   c",
		"&nbsp;&nbsp;x y z&nbsp;&nbsp;&nbsp;",
	}
	for _, src := range srcs {
		full := Excerpt(src, 1<<20, false)
		for max := 1; max <= utf8.RuneCountInString(full)+2; max++ {
			want := full
			if utf8.RuneCountInString(full) > max {
				want = strings.TrimRight(string([]rune(full)[:max]), " \u00a0") + "..."
			}
			if got := Excerpt(src, max, true); got != want {
				t.Errorf("Excerpt(%q, %d) = %q, want %q", src, max, got, want)
			}
		}
	}
}
