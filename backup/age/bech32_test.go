package age

import (
	"strings"
	"testing"
)

// TestBech32 checks the decoder against BIP 173's test vectors (valid
// checksums, and invalid strings; the 84-character limit is not age's)
// and the encoder against a decode of each.
func TestBech32(t *testing.T) {
	valid := []string{
		"A12UEL5L",
		"a12uel5l",
		"an83characterlonghumanreadablepartthatcontainsthenumber1andtheexcludedcharactersbio1tt5tgs",
		"abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw",
		"split1checkupstagehandshakeupstreamerranterredcaperred2y9e3w",
		"?1ezyfcl",
	}
	for _, s := range valid {
		hrp, data, err := bech32Decode(s)
		if err != nil {
			t.Errorf("bech32Decode(%q) = %v, want success", s, err)
			continue
		}
		if got := bech32Encode(hrp, data); got != strings.ToLower(s) {
			t.Errorf("bech32Encode(bech32Decode(%q)) = %q", s, got)
		}
	}
	invalid := []struct{ name, s string }{
		{"HRP character out of range", "\x201nwldj5"},
		{"HRP character DEL", "\x7f1axkwrx"},
		{"no separator", "pzry9x0s0muk"},
		{"empty HRP", "1pzry9x0s0muk"},
		{"invalid data character", "x1b4n0q5v"},
		{"checksum too short", "li1dgmt3"},
		{"invalid checksum character", "de1lg7wt\xff"},
		{"checksum of the upper-case HRP", "A1G7SGD8"},
		{"empty HRP, data", "10a06t8"},
		{"empty HRP, short", "1qzzfhee"},
		{"mixed case", "A12uEL5L"},
		{"one flipped character", "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxx"},
		{"too long", strings.Repeat("q", maxBech32+1)},
	}
	for _, tc := range invalid {
		if _, _, err := bech32Decode(tc.s); err == nil {
			t.Errorf("bech32Decode(%q) (%s) succeeded, want an error", tc.s, tc.name)
		}
	}
}

// TestKeys parses the test kit's identity and checks its recipient as
// age-keygen -y prints it, and that both print back as parsed.
func TestKeys(t *testing.T) {
	const (
		identity  = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"
		recipient = "age1xmwwc06ly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef" // age-keygen -y
	)
	id, err := ParseX25519Identity(identity)
	if err != nil {
		t.Fatal(err)
	}
	if got := id.String(); got != identity {
		t.Errorf("String() = %q, want %q", got, identity)
	}
	if got := id.Recipient().String(); got != recipient {
		t.Errorf("Recipient() = %q, want %q", got, recipient)
	}
	r, err := ParseX25519Recipient(recipient)
	if err != nil || r.String() != recipient {
		t.Errorf("ParseX25519Recipient(%q) = %v, %v", recipient, r, err)
	}
	for _, bad := range []string{
		"", "age1", strings.ToLower(identity), recipient, identity[:len(identity)-1] + "1",
		strings.ToUpper(recipient), "AGE-SECRET-KEY-PQ-1HZLGZUPT4ETPKDEV8HSGFDCYZ4E522W0A7PU2LHT8EH9W6YLNC3SW78XKG",
	} {
		if _, err := ParseX25519Identity(bad); err == nil {
			t.Errorf("ParseX25519Identity(%q) succeeded", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseX25519Identity error %q repeats the secret", err)
		}
	}
	for _, bad := range []string{"", identity, "age1" + recipient[4:len(recipient)-1] + "q", "age1qqqq"} {
		if _, err := ParseX25519Recipient(bad); err == nil {
			t.Errorf("ParseX25519Recipient(%q) succeeded", bad)
		}
	}
}
