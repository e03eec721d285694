package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf16"
)

// varint decodes SQLite's big-endian variable-length integer (1 to 9
// bytes; the ninth byte gives all 8 of its bits). n is 0 when b ends
// before the integer does.
func varint(b []byte) (v uint64, n int) {
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}

// serialSize is the content size of a value of serial type t; ok is false
// for the reserved types 10 and 11.
func serialSize(t uint64) (n uint64, ok bool) {
	switch {
	case t <= 4:
		return t, true
	case t == 5:
		return 6, true
	case t == 6, t == 7:
		return 8, true
	case t == 8, t == 9:
		return 0, true
	case t == 10, t == 11:
		return 0, false
	}
	return (t - 12) / 2, true
}

var errRecord = errors.New("record")

// decodeRecord decodes a record (header of serial types, then the values)
// into dst, appending one value per column the record holds: nil, int64,
// float64, string or []byte (copies: nothing refers to payload). enc is
// the database's text encoding.
func decodeRecord(dst []any, payload []byte, enc byte) ([]any, error) {
	hlen, n := varint(payload)
	if n == 0 || hlen < uint64(n) || hlen > uint64(len(payload)) {
		return dst, fmt.Errorf("%w header length %d does not fit the %d-byte payload", errRecord, hlen, len(payload))
	}
	hdr, body := payload[n:hlen], payload[hlen:]
	for len(hdr) > 0 {
		t, m := varint(hdr)
		if m == 0 {
			return dst, fmt.Errorf("%w header ends inside a serial type", errRecord)
		}
		hdr = hdr[m:]
		size, ok := serialSize(t)
		if !ok {
			return dst, fmt.Errorf("%w uses the reserved serial type %d", errRecord, t)
		}
		if size > uint64(len(body)) {
			return dst, fmt.Errorf("%w value of serial type %d needs %d bytes, %d are left", errRecord, t, size, len(body))
		}
		v, err := decodeValue(t, body[:size], enc)
		if err != nil {
			return dst, err
		}
		dst = append(dst, v)
		body = body[size:]
	}
	return dst, nil
}

func decodeValue(t uint64, b []byte, enc byte) (any, error) {
	switch {
	case t == 0:
		return nil, nil
	case t <= 6:
		// Big-endian two's complement of 1, 2, 3, 4, 6 or 8 bytes.
		var v int64
		if len(b) > 0 && b[0]&0x80 != 0 {
			v = -1
		}
		for _, c := range b {
			v = v<<8 | int64(c)
		}
		return v, nil
	case t == 7:
		return math.Float64frombits(binary.BigEndian.Uint64(b)), nil
	case t == 8:
		return int64(0), nil
	case t == 9:
		return int64(1), nil
	case t%2 == 0:
		return append([]byte{}, b...), nil
	}
	return decodeText(b, enc)
}

func decodeText(b []byte, enc byte) (any, error) {
	if enc == encUTF8 {
		return string(b), nil
	}
	if len(b)%2 != 0 {
		return nil, fmt.Errorf("%w UTF-16 text has an odd length %d", errRecord, len(b))
	}
	u := make([]uint16, len(b)/2)
	for i := range u {
		if enc == encUTF16LE {
			u[i] = binary.LittleEndian.Uint16(b[2*i:])
		} else {
			u[i] = binary.BigEndian.Uint16(b[2*i:])
		}
	}
	return string(utf16.Decode(u)), nil
}
