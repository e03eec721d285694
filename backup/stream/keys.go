package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"strongbox/backup/s3"
)

// Bucket is the object storage a stream is kept in: the S3 client of
// package backup/s3 (or backup.ObjectStore) is one as it is.
type Bucket interface {
	List(ctx context.Context, prefix string) ([]s3.Object, error)
	Get(ctx context.Context, key string, off, n int64) (io.ReadCloser, s3.Object, error)
	Put(ctx context.Context, key string, body []byte, contentType string) error
	Upload(ctx context.Context, key string, r io.Reader, contentType string) (s3.Object, error)
	Delete(ctx context.Context, key string) error
}

// Object describes a stored object.
type Object = s3.Object

// DefaultPrefix is where the server keeps its stream in its bucket.
const DefaultPrefix = "stream/"

// Keys of a stream under its prefix P:
//
//	P gens/<gen>        the generation's marker (JSON), written before its base
//	P data/<gen>/<seq>  its objects: seq 0 the base, then the increments
//
// <gen> is 16 hex digits, the first 12 the generation's start in Unix
// milliseconds, so that keys sort by age; <seq> is 10 decimal digits.
func genKey(prefix string, gen uint64) string { return fmt.Sprintf("%sgens/%016x", prefix, gen) }
func dataPrefix(prefix string, gen uint64) string {
	return fmt.Sprintf("%sdata/%016x/", prefix, gen)
}
func objectKey(prefix string, gen, seq uint64) string {
	return fmt.Sprintf("%s%010d", dataPrefix(prefix, gen), seq)
}

// marker is a generation's marker object.
type marker struct {
	Generation string    `json:"generation"`
	Started    time.Time `json:"started"`
}

// generation is one generation as a listing found it.
type generation struct {
	id      uint64
	started time.Time
}

// listGenerations returns the generations with a marker, oldest first.
func listGenerations(ctx context.Context, b Bucket, prefix string) ([]generation, error) {
	objs, err := b.List(ctx, prefix+"gens/")
	if err != nil {
		return nil, err
	}
	var gens []generation
	for _, o := range objs {
		id, err := strconv.ParseUint(strings.TrimPrefix(o.Key, prefix+"gens/"), 16, 64)
		if err != nil || genKey(prefix, id) != o.Key {
			continue // not ours
		}
		body, _, err := b.Get(ctx, o.Key, 0, 4096)
		if err != nil {
			return nil, err
		}
		var m marker
		err = json.NewDecoder(body).Decode(&m)
		body.Close()
		if err != nil || m.Generation != fmt.Sprintf("%016x", id) {
			continue // a damaged marker: the generation cannot be trusted
		}
		gens = append(gens, generation{id: id, started: m.Started})
	}
	slices.SortFunc(gens, func(a, b generation) int { return a.started.Compare(b.started) })
	return gens, nil
}

// listObjects returns the seqs of a generation's objects, ascending.
func listObjects(ctx context.Context, b Bucket, prefix string, gen uint64) ([]uint64, error) {
	p := dataPrefix(prefix, gen)
	objs, err := b.List(ctx, p)
	if err != nil {
		return nil, err
	}
	var seqs []uint64
	for _, o := range objs {
		seq, err := strconv.ParseUint(strings.TrimPrefix(o.Key, p), 10, 64)
		if err != nil || objectKey(prefix, gen, seq) != o.Key {
			continue
		}
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	return seqs, nil
}
