package age

import (
	"errors"
	"strings"
)

// Bech32 (BIP 173), the encoding of age's keys: a human-readable part,
// "1", the data as 5-bit groups in the charset below, and a 6-character
// BCH checksum over both. age uses the original constant (not bech32m's)
// and lifts the 90-character limit; a key is 62 or 74 characters, so
// bech32Decode bounds the input at maxBech32 instead.

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"

// maxBech32 bounds what bech32Decode reads: far above any key.
const maxBech32 = 256

var errBech32 = errors.New("age: invalid bech32 string")

// bech32Polymod is BIP 173's checksum function over 5-bit values.
func bech32Polymod(values []byte) uint32 {
	gen := [5]uint32{0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3}
	chk := uint32(1)
	for _, v := range values {
		top := chk >> 25
		chk = (chk&0x1ffffff)<<5 ^ uint32(v)
		for i := range 5 {
			if (top>>i)&1 == 1 {
				chk ^= gen[i]
			}
		}
	}
	return chk
}

// hrpExpand is the human-readable part as the checksum reads it.
func hrpExpand(hrp string) []byte {
	out := make([]byte, 0, 2*len(hrp)+1)
	for i := range len(hrp) {
		out = append(out, hrp[i]>>5)
	}
	out = append(out, 0)
	for i := range len(hrp) {
		out = append(out, hrp[i]&31)
	}
	return out
}

// convertBits regroups data from groups of from bits into groups of to
// bits. With pad, the last group is zero-padded; without, leftover bits
// must be fewer than from and zero (BIP 173's rule for decoding).
func convertBits(data []byte, from, to uint, pad bool) ([]byte, bool) {
	var acc, bits uint
	maxv := uint(1)<<to - 1
	out := make([]byte, 0, len(data)*int(from)/int(to)+1)
	for _, b := range data {
		if uint(b)>>from != 0 {
			return nil, false
		}
		acc = acc<<from | uint(b)
		bits += from
		for bits >= to {
			bits -= to
			out = append(out, byte(acc>>bits&maxv))
		}
	}
	if pad {
		if bits > 0 {
			out = append(out, byte(acc<<(to-bits)&maxv))
		}
	} else if bits >= from || acc<<(to-bits)&maxv != 0 {
		return nil, false
	}
	return out, true
}

// bech32Encode encodes data under hrp, in lower case (the caller upper-
// cases an identity).
func bech32Encode(hrp string, data []byte) string {
	hrp = strings.ToLower(hrp)
	values, _ := convertBits(data, 8, 5, true)
	chk := bech32Polymod(append(append(hrpExpand(hrp), values...), 0, 0, 0, 0, 0, 0)) ^ 1
	var b strings.Builder
	b.WriteString(hrp)
	b.WriteByte('1')
	for _, v := range values {
		b.WriteByte(bech32Charset[v])
	}
	for i := range 6 {
		b.WriteByte(bech32Charset[chk>>(5*(5-i))&31])
	}
	return b.String()
}

// bech32Decode decodes s, which must be all lower or all upper case, and
// returns its human-readable part (lower case) and data.
func bech32Decode(s string) (hrp string, data []byte, err error) {
	if len(s) > maxBech32 {
		return "", nil, errBech32
	}
	if strings.ToLower(s) != s && strings.ToUpper(s) != s {
		return "", nil, errBech32 // mixed case
	}
	s = strings.ToLower(s)
	pos := strings.LastIndexByte(s, '1')
	if pos < 1 || pos+7 > len(s) {
		return "", nil, errBech32
	}
	hrp = s[:pos]
	for i := range len(hrp) {
		if hrp[i] < 33 || hrp[i] > 126 {
			return "", nil, errBech32
		}
	}
	values := make([]byte, 0, len(s)-pos-1)
	for i := pos + 1; i < len(s); i++ {
		v := strings.IndexByte(bech32Charset, s[i])
		if v < 0 {
			return "", nil, errBech32
		}
		values = append(values, byte(v))
	}
	if bech32Polymod(append(hrpExpand(hrp), values...)) != 1 {
		return "", nil, errBech32
	}
	data, ok := convertBits(values[:len(values)-6], 5, 8, false)
	if !ok {
		return "", nil, errBech32
	}
	return hrp, data, nil
}
