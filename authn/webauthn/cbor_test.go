package webauthn_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"

	"strongbox/authn/webauthn"
	"strongbox/authn/webauthntest"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// show prints a value canonically, so that tests compare strings.
func show(v webauthn.Value) string {
	var b strings.Builder
	var walk func(webauthn.Value)
	walk = func(v webauthn.Value) {
		switch v.Kind {
		case webauthn.KindInt:
			b.WriteString(strconv.FormatInt(v.Int, 10))
		case webauthn.KindBytes:
			b.WriteString("h'" + hex.EncodeToString(v.Bytes) + "'")
		case webauthn.KindText:
			b.WriteString(`"` + string(v.Bytes) + `"`)
		case webauthn.KindArray:
			b.WriteString("[")
			for i, x := range v.Items {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(x)
			}
			b.WriteString("]")
		case webauthn.KindMap:
			b.WriteString("{")
			for i, p := range v.Pairs {
				if i > 0 {
					b.WriteString(", ")
				}
				walk(p.Key)
				b.WriteString(": ")
				walk(p.Val)
			}
			b.WriteString("}")
		case webauthn.KindBool:
			if v.Bool {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case webauthn.KindNull:
			b.WriteString("null")
		}
	}
	walk(v)
	return b.String()
}

// The examples of RFC 8949 Appendix A that the subset covers, and what
// it refuses.
func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, want, err string
	}{
		{"zero", "00", "0", ""},
		{"23", "17", "23", ""},
		{"24", "1818", "24", ""},
		{"1000", "1903e8", "1000", ""},
		{"1000000", "1a000f4240", "1000000", ""},
		{"1e12", "1b000000e8d4a51000", "1000000000000", ""},
		{"-1", "20", "-1", ""},
		{"-1000", "3903e7", "-1000", ""},
		{"max int64", "1b7fffffffffffffff", "9223372036854775807", ""},
		{"min int64", "3b7fffffffffffffff", "-9223372036854775808", ""},
		{"bytes", "4401020304", "h'01020304'", ""},
		{"text", "6449455446", `"IETF"`, ""},
		{"text utf-8", "62c3bc", `"ü"`, ""},
		{"array", "83010203", "[1, 2, 3]", ""},
		{"nested", "8301820203820405", "[1, [2, 3], [4, 5]]", ""},
		{"map", "a201020304", "{1: 2, 3: 4}", ""},
		{"text keys", `a26161016162820203`, `{"a": 1, "b": [2, 3]}`, ""},
		{"simple", "83f4f5f6", "[false, true, null]", ""},
		{"undefined", "f7", "null", ""},
		{"empty", "", "", "unexpected end"},
		{"uint64 too big", "1bffffffffffffffff", "", "out of range"},
		{"negative too big", "3bffffffffffffffff", "", "out of range"},
		{"truncated arg", "19 03", "", "unexpected end"},
		{"string longer than input", "5a ffffffff 00", "", "string of 4294967295 bytes"},
		{"array longer than input", "9b 00000000ffffffff", "", "array of 4294967295 items"},
		{"map longer than input", "bb 00000000ffffffff", "", "map of 4294967295 pairs"},
		{"indefinite bytes", "5f42010243030405ff", "", "indefinite"},
		{"indefinite array", "9fff", "", "indefinite"},
		{"reserved", "1c", "", "reserved"},
		{"tag", "c074323031332d30332d32315432303a30343a30305a", "", "tags"},
		{"float", "f93c00", "", "float"},
		{"bad utf-8", "62c328", "", "UTF-8"},
		{"bytes key", "a1420102 01", "", "neither an integer nor text"},
		{"duplicate key", "a2 01 02 01 03", "", "duplicate"},
		{"trailing bytes", "0000", "", "1 bytes after"},
		{"too deep", strings.Repeat("81", 17) + "00", "", "nested deeper than 16"},
		{"deep enough", strings.Repeat("81", 16) + "00", strings.Repeat("[", 16) + "0" + strings.Repeat("]", 16), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := webauthn.Decode(unhex(t, tt.in))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, webauthn.ErrCBOR) {
					t.Fatalf("Decode(%s) = %s, %v, want an ErrCBOR with %q", tt.in, show(v), err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode(%s): %v", tt.in, err)
			}
			if got := show(v); got != tt.want {
				t.Fatalf("Decode(%s) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// The software authenticator's encoder and the decoder agree.
func TestDecodeEncoded(t *testing.T) {
	in := webauthntest.Map(1, 2, 3, -7, "fmt", "none", "k", []byte{1, 2}, "m", webauthntest.Map(), "b", true, "n", nil)
	v, err := webauthn.Decode(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := show(v), `{1: 2, 3: -7, "fmt": "none", "k": h'0102', "m": {}, "b": true, "n": null}`; got != want {
		t.Fatalf("Decode = %s, want %s", got, want)
	}
	if s, ok := v.GetText("k"); !ok || !bytes.Equal(s.Bytes, []byte{1, 2}) {
		t.Fatalf(`GetText("k") = %v, %v`, s, ok)
	}
}

// FuzzDecode checks that no input panics, that what decodes was all of
// the input, and that a decoded value re-decodes from the bytes it took.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"00", "a201020304", "8301820203820405", "62c3bc", "5f42010243030405ff", strings.Repeat("81", 17) + "00", "bb00000000ffffffff"} {
		b, _ := hex.DecodeString(s)
		f.Add(b)
	}
	f.Add([]byte(webauthntest.Map("fmt", "none", "attStmt", webauthntest.Map(), "authData", []byte{1, 2, 3})))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, n, err := webauthn.DecodeFirst(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("DecodeFirst took %d of %d bytes", n, len(b))
		}
		w, err := webauthn.Decode(b[:n])
		if err != nil || show(w) != show(v) {
			t.Fatalf("Decode of the item's own bytes = %s, %v, want %s", show(w), err, show(v))
		}
	})
}
