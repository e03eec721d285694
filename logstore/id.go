package logstore

// Entry ids are 15 characters of [a-z0-9] (as PocketBase's), built so that
// the store can find an entry from its id without an id → row map, which at a
// million entries would cost more memory than the whole index row:
//
//	id = base36(seq, 9 digits) + base36(mix(seq ^ key) mod 36^6, 6 digits)
//
// seq is the entry's insertion sequence number (its rowid), unique for the
// life of the data directory; key is a 64-bit random number chosen when the
// directory's first segment is created and carried in every segment's file
// name. The first 9 characters locate the row; the last 6 make ids of
// different stores differ and let Get reject an id whose prefix happens to
// name an existing row. Callers may also supply their own ids (Entry.ID);
// those are stored in the record and, packed, in the index (foreign.go).

const (
	idLen    = 15
	seqChars = 9

	// maxSeq is the largest sequence number an id can hold (36^9 - 1): at
	// 200,000 entries a second without pause it lasts 16 years.
	maxSeq = 101559956668415

	sufMod = 2176782336 // 36^6
)

const digits36 = "0123456789abcdefghijklmnopqrstuvwxyz"

// makeID returns the derived id of the entry with sequence number seq in a
// segment with the given key.
func makeID(seq int64, key uint64) [idLen]byte {
	var id [idLen]byte
	v := uint64(seq)
	for i := seqChars - 1; i >= 0; i-- {
		id[i] = digits36[v%36]
		v /= 36
	}
	s := mix64(uint64(seq)^key) % sufMod
	for i := idLen - 1; i >= seqChars; i-- {
		id[i] = digits36[s%36]
		s /= 36
	}
	return id
}

// mix64 is the splitmix64 finaliser: a cheap bijective scramble of 64 bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// idSeq returns the sequence number in the first 9 characters of a derived
// id; ok is false when id is not 15 characters of [a-z0-9].
func idSeq(id string) (seq int64, ok bool) {
	if len(id) != idLen {
		return 0, false
	}
	for i := 0; i < idLen; i++ {
		d := digit36(id[i])
		if d < 0 {
			return 0, false
		}
		if i < seqChars {
			seq = seq*36 + int64(d)
		}
	}
	return seq, true
}

func digit36(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 10
	}
	return -1
}

// validID reports whether id is 15 characters of [a-z0-9].
func validID[S ~string | ~[]byte](id S) bool {
	if len(id) != idLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if digit36(id[i]) < 0 {
			return false
		}
	}
	return true
}
