package totp

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rfcKey is the SHA-1 seed of RFC 6238 Appendix B and RFC 4226 Appendix D:
// the ASCII digits "12345678901234567890".
var rfcKey = []byte("12345678901234567890")

// TestHOTPRFC4226 checks the ten codes of RFC 4226 Appendix D.
func TestHOTPRFC4226(t *testing.T) {
	want := []string{"755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583", "399871", "520489"}
	for i, w := range want {
		if got := HOTP(rfcKey, uint64(i)); got != w {
			t.Errorf("HOTP(rfcKey, %d) = %s, want %s", i, got, w)
		}
	}
}

// TestTOTPRFC6238 checks the SHA-1 rows of RFC 6238 Appendix B. The
// appendix gives 8-digit codes; 6 digits are their last six (the same
// truncated value modulo 10^6).
func TestTOTPRFC6238(t *testing.T) {
	tests := []struct {
		unix int64
		step string // T in hex, as the appendix writes it
		code string // 8 digits
	}{
		{59, "0000000000000001", "94287082"},
		{1111111109, "00000000023523EC", "07081804"},
		{1111111111, "00000000023523ED", "14050471"},
		{1234567890, "000000000273EF07", "89005924"},
		{2000000000, "0000000003F940AA", "69279037"},
		{20000000000, "0000000027BC86AA", "65353130"},
	}
	for _, tt := range tests {
		at := time.Unix(tt.unix, 0)
		wantStep, _ := strconv.ParseInt(tt.step, 16, 64)
		if got := Step(at); got != wantStep {
			t.Errorf("Step(%d) = %X, want %s", tt.unix, got, tt.step)
		}
		if got, want := Code(rfcKey, at), tt.code[2:]; got != want {
			t.Errorf("Code(rfcKey, %d) = %s, want %s", tt.unix, got, want)
		}
		if step, ok := Verify(rfcKey, tt.code[2:], at, -1); !ok || step != wantStep {
			t.Errorf("Verify(rfcKey, %s, %d, -1) = %d, %v, want %d, true", tt.code[2:], tt.unix, step, ok, wantStep)
		}
	}
}

func TestVerifyWindowAndReplay(t *testing.T) {
	at := time.Unix(1234567890, 0)
	now := Step(at)
	code := func(s int64) string { return HOTP(rfcKey, uint64(s)) }
	tests := []struct {
		name     string
		code     string
		after    int64
		wantStep int64
		wantOK   bool
	}{
		{"current step", code(now), -1, now, true},
		{"previous step", code(now - 1), -1, now - 1, true},
		{"next step", code(now + 1), -1, now + 1, true},
		{"two steps back", code(now - 2), -1, 0, false},
		{"two steps ahead", code(now + 2), -1, 0, false},
		{"current step already used", code(now), now, 0, false},
		{"previous step after the current one was used", code(now - 1), now, 0, false},
		{"next step after the current one was used", code(now + 1), now, now + 1, true},
		{"five digits", code(now)[1:], -1, 0, false},
		{"seven digits", code(now) + "0", -1, 0, false},
		{"not digits", "12345a", -1, 0, false},
		{"empty", "", -1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			step, ok := Verify(rfcKey, tt.code, at, tt.after)
			if ok != tt.wantOK || (ok && step != tt.wantStep) {
				t.Errorf("Verify(%q, after %d) = %d, %v, want %d, %v", tt.code, tt.after, step, ok, tt.wantStep, tt.wantOK)
			}
		})
	}
}

func TestParseCode(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"123456", "123456", true},
		{"123 456", "123456", true},
		{" 123-456 ", "123456", true},
		{"12345", "", false},
		{"1234567", "", false},
		{"12345６", "", false}, // a full-width digit
		{"abcdef", "", false},
		{strings.Repeat(" ", 40) + "123456", "", false},
	}
	for _, tt := range tests {
		got, ok := ParseCode(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParseCode(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSecretRoundTrip(t *testing.T) {
	key := []byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13")
	enc := EncodeSecret(key)
	if len(enc) != 32 || strings.Contains(enc, "=") {
		t.Fatalf("EncodeSecret = %q, want 32 characters without padding", enc)
	}
	for _, in := range []string{enc, strings.ToLower(enc), enc[:4] + " " + enc[4:]} {
		got, err := DecodeSecret(in)
		if err != nil || string(got) != string(key) {
			t.Errorf("DecodeSecret(%q) = %x, %v, want %x", in, got, err, key)
		}
	}
	for _, bad := range []string{"", "ABC", enc[:31], enc + "AA", "1" + enc[1:]} {
		if _, err := DecodeSecret(bad); err == nil {
			t.Errorf("DecodeSecret(%q) = nil error, want ErrSecret", bad)
		}
	}
}

func TestURI(t *testing.T) {
	key := rfcKey
	sec := EncodeSecret(key)
	tests := []struct {
		issuer, account, want string
	}{
		{"Acme", "alice@example.com", "otpauth://totp/Acme:alice@example.com?secret=" + sec + "&issuer=Acme"},
		{"Acme Co", "a b@example.com", "otpauth://totp/Acme%20Co:a%20b@example.com?secret=" + sec + "&issuer=Acme%20Co"},
		{"A:B&C=D/E?", "x:y@example.com", "otpauth://totp/A%3AB&C=D%2FE%3F:x%3Ay@example.com?secret=" + sec + "&issuer=A%3AB%26C%3DD%2FE%3F"},
		{"Ünï", "u@example.com", "otpauth://totp/%C3%9Cn%C3%AF:u@example.com?secret=" + sec + "&issuer=%C3%9Cn%C3%AF"},
		{"", "u@example.com", "otpauth://totp/u@example.com?secret=" + sec},
	}
	for _, tt := range tests {
		if got := URI(tt.issuer, tt.account, key); got != tt.want {
			t.Errorf("URI(%q, %q) =\n %s, want\n %s", tt.issuer, tt.account, got, tt.want)
		}
	}
}

// TestOathtool checks codes against Debian's oathtool (package
// oathtool), named by STRONGBOX_OATHTOOL: for random secrets and times,
// its code is the one Code computes and Verify accepts.
func TestOathtool(t *testing.T) {
	bin := os.Getenv("STRONGBOX_OATHTOOL")
	if bin == "" {
		t.Skip("STRONGBOX_OATHTOOL is unset (Debian package oathtool: STRONGBOX_OATHTOOL=/usr/bin/oathtool)")
	}
	keys := [][]byte{rfcKey, []byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0\x00\x00\x00\x01")}
	times := []int64{0, 59, 1111111109, 1700000000, 2000000000}
	for _, key := range keys {
		for _, unix := range times {
			out, err := exec.Command(bin, "--totp", "-b", "-N", "@"+strconv.FormatInt(unix, 10), EncodeSecret(key)).Output()
			if err != nil {
				t.Fatalf("oathtool: %v", err)
			}
			want := strings.TrimSpace(string(out))
			at := time.Unix(unix, 0)
			if got := Code(key, at); got != want {
				t.Errorf("Code(%x, %d) = %s, oathtool says %s", key, unix, got, want)
			}
			if _, ok := Verify(key, want, at, -1); !ok {
				t.Errorf("Verify(%x, %s, %d) refused oathtool's code", key, want, unix)
			}
		}
	}
}

func FuzzParseCode(f *testing.F) {
	for _, s := range []string{"123456", "123 456", "12-34-56", "", "abcdef", "１２３４５６", strings.Repeat("1", 33)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseCode(s)
		if !ok {
			return
		}
		if len(c) != Digits || !digits(c) {
			t.Fatalf("ParseCode(%q) = %q, true: not %d digits", s, c, Digits)
		}
		if again, ok := ParseCode(c); !ok || again != c {
			t.Fatalf("ParseCode(ParseCode(%q)) = %q, %v", s, again, ok)
		}
	})
}

func FuzzDecodeSecret(f *testing.F) {
	for _, s := range []string{EncodeSecret(rfcKey), "", "====", "abc", strings.Repeat("A", 33), "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		key, err := DecodeSecret(s)
		if err != nil {
			return
		}
		if len(key) != SecretSize {
			t.Fatalf("DecodeSecret(%q) = %d bytes", s, len(key))
		}
		if again, err := DecodeSecret(EncodeSecret(key)); err != nil || string(again) != string(key) {
			t.Fatalf("round trip of %q: %x, %v", s, again, err)
		}
	})
}

// BenchmarkVerify is the cost of checking one code: three HMAC-SHA1 (the
// window of ±1 step).
func BenchmarkVerify(b *testing.B) {
	at := time.Unix(1700000000, 0)
	code := Code(rfcKey, at)
	for b.Loop() {
		if _, ok := Verify(rfcKey, code, at, -1); !ok {
			b.Fatal("refused")
		}
	}
}
