package webauthn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"
)

// Kind is the kind of a decoded CBOR data item (RFC 8949 §3.1).
type Kind uint8

// The kinds Decode returns.
const (
	KindInt   Kind = iota + 1 // major types 0 and 1, in Value.Int
	KindBytes                 // major type 2, in Value.Bytes
	KindText                  // major type 3 (valid UTF-8), in Value.Bytes
	KindArray                 // major type 4, in Value.Items
	KindMap                   // major type 5, in Value.Pairs (in order)
	KindBool                  // simple values 20 and 21, in Value.Bool
	KindNull                  // simple values 22 (null) and 23 (undefined)
)

// Value is one decoded CBOR data item. Byte and text strings alias the
// input.
type Value struct {
	Kind  Kind
	Int   int64
	Bytes []byte
	Items []Value
	Pairs []Pair
	Bool  bool
}

// Pair is one entry of a CBOR map.
type Pair struct {
	Key, Val Value
}

// MaxDepth is how deeply Decode lets arrays and maps nest.
const MaxDepth = 16

// ErrCBOR is wrapped by every decoding error.
var ErrCBOR = errors.New("webauthn: invalid CBOR")

// Decode decodes the one CBOR data item that is all of b.
func Decode(b []byte) (Value, error) {
	v, n, err := DecodeFirst(b)
	if err != nil {
		return Value{}, err
	}
	if n != len(b) {
		return Value{}, fmt.Errorf("%w: %d bytes after the data item", ErrCBOR, len(b)-n)
	}
	return v, nil
}

// DecodeFirst decodes the data item at the start of b and returns it with
// the number of bytes it took. It reads the subset of RFC 8949 that WebAuthn
// uses: integers that fit an int64, byte and text strings, arrays, maps
// whose keys are integers or text and appear once, false, true, null and
// undefined, all of definite length, nested at most MaxDepth deep. Tags,
// floats, other simple values and indefinite lengths are refused. Every
// length is checked against the bytes left before anything is allocated,
// so no input makes it allocate more than a few times its own size.
func DecodeFirst(b []byte) (Value, int, error) {
	d := decoder{b: b}
	v, err := d.item(0)
	if err != nil {
		return Value{}, 0, err
	}
	return v, d.off, nil
}

type decoder struct {
	b   []byte
	off int
}

func (d *decoder) errorf(format string, args ...any) error {
	return fmt.Errorf("%w at offset %d: %s", ErrCBOR, d.off, fmt.Sprintf(format, args...))
}

// head reads an initial byte and its argument (RFC 8949 §3).
func (d *decoder) head() (major byte, info byte, arg uint64, err error) {
	if d.off >= len(d.b) {
		return 0, 0, 0, d.errorf("unexpected end of input")
	}
	ib := d.b[d.off]
	d.off++
	major, info = ib>>5, ib&0x1f
	var n int
	switch {
	case info < 24:
		return major, info, uint64(info), nil
	case info == 24:
		n = 1
	case info == 25:
		n = 2
	case info == 26:
		n = 4
	case info == 27:
		n = 8
	case info == 31:
		return 0, 0, 0, d.errorf("indefinite lengths are not supported")
	default:
		return 0, 0, 0, d.errorf("reserved additional information %d", info)
	}
	if len(d.b)-d.off < n {
		return 0, 0, 0, d.errorf("unexpected end of input")
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	switch n {
	case 1:
		arg = uint64(p[0])
	case 2:
		arg = uint64(binary.BigEndian.Uint16(p))
	case 4:
		arg = uint64(binary.BigEndian.Uint32(p))
	default:
		arg = binary.BigEndian.Uint64(p)
	}
	return major, info, arg, nil
}

func (d *decoder) item(depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, d.errorf("nested deeper than %d", MaxDepth)
	}
	major, info, arg, err := d.head()
	if err != nil {
		return Value{}, err
	}
	switch major {
	case 0, 1:
		if arg > math.MaxInt64 {
			return Value{}, d.errorf("integer out of range")
		}
		n := int64(arg)
		if major == 1 {
			n = -1 - n
		}
		return Value{Kind: KindInt, Int: n}, nil
	case 2, 3:
		if arg > uint64(len(d.b)-d.off) {
			return Value{}, d.errorf("string of %d bytes, %d left", arg, len(d.b)-d.off)
		}
		s := d.b[d.off : d.off+int(arg) : d.off+int(arg)]
		d.off += int(arg)
		if major == 3 {
			if !utf8.Valid(s) {
				return Value{}, d.errorf("text string is not UTF-8")
			}
			return Value{Kind: KindText, Bytes: s}, nil
		}
		return Value{Kind: KindBytes, Bytes: s}, nil
	case 4:
		// Each item takes at least one byte.
		if arg > uint64(len(d.b)-d.off) {
			return Value{}, d.errorf("array of %d items, %d bytes left", arg, len(d.b)-d.off)
		}
		items := make([]Value, 0, int(arg))
		for range arg {
			v, err := d.item(depth + 1)
			if err != nil {
				return Value{}, err
			}
			items = append(items, v)
		}
		return Value{Kind: KindArray, Items: items}, nil
	case 5:
		return d.mapItem(arg, depth)
	case 6:
		return Value{}, d.errorf("tags are not supported")
	}
	switch info {
	case 20, 21:
		return Value{Kind: KindBool, Bool: info == 21}, nil
	case 22, 23:
		return Value{Kind: KindNull}, nil
	}
	return Value{}, d.errorf("simple value or float %d is not supported", info)
}

func (d *decoder) mapItem(n uint64, depth int) (Value, error) {
	// Each pair takes at least two bytes.
	if n > uint64(len(d.b)-d.off)/2 {
		return Value{}, d.errorf("map of %d pairs, %d bytes left", n, len(d.b)-d.off)
	}
	pairs := make([]Pair, 0, int(n))
	for range n {
		at := d.off
		k, err := d.item(depth + 1)
		if err != nil {
			return Value{}, err
		}
		if k.Kind != KindInt && k.Kind != KindText {
			d.off = at
			return Value{}, d.errorf("map key is neither an integer nor text")
		}
		for _, p := range pairs {
			if sameKey(p.Key, k) {
				d.off = at
				return Value{}, d.errorf("duplicate map key")
			}
		}
		v, err := d.item(depth + 1)
		if err != nil {
			return Value{}, err
		}
		pairs = append(pairs, Pair{k, v})
	}
	return Value{Kind: KindMap, Pairs: pairs}, nil
}

func sameKey(a, b Value) bool {
	if a.Kind != b.Kind {
		return false
	}
	if a.Kind == KindInt {
		return a.Int == b.Int
	}
	return string(a.Bytes) == string(b.Bytes)
}

// Get returns the value of the map entry whose key is the integer k.
func (v Value) Get(k int64) (Value, bool) {
	for _, p := range v.Pairs {
		if p.Key.Kind == KindInt && p.Key.Int == k {
			return p.Val, true
		}
	}
	return Value{}, false
}

// GetText returns the value of the map entry whose key is the text k.
func (v Value) GetText(k string) (Value, bool) {
	for _, p := range v.Pairs {
		if p.Key.Kind == KindText && string(p.Key.Bytes) == k {
			return p.Val, true
		}
	}
	return Value{}, false
}
