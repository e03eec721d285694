// Package stream is continuous backup: it ships the committed changes of
// a data dir's journals to an S3 bucket as they happen, and rebuilds a
// data dir from the bucket alone, at its latest state or at any instant
// of the retention window (point-in-time restore). It knows nothing of
// HTTP or of the stores: the server feeds a Shipper captures
// (Options.Capture, the stores' own Capture turned into Files by
// FromSection), and the restore command calls Restore and List.
//
// # Generations and objects
//
// A generation starts with a base, the whole files of one capture, and
// goes on with increments, each holding what changed since the object
// before: per file, the bytes appended (offset, bytes, and the commit
// marks of the journal, see journal.Mark), the file replaced by a
// compaction (its new content whole, after the frames the old file got
// since the previous capture, which the capture's Section.Prior holds)
// or the file deleted (a log segment dropped by retention). The shipper
// captures every Options.Interval (300 ms), and ships an object only
// when something changed; a new generation starts when the shipper
// starts, and when the current one has MaxObjects (40,000) objects, is
// MaxAge (24 h) old, or its increments hold more bytes than its base (and
// over 64 MiB), which bounds the time a restore takes. The last increment
// of a generation and the base of the next are made from the same
// capture, so the restore points of two generations meet.
//
// Keys, under the prefix P (DefaultPrefix, "stream/"):
//
//	P gens/<gen>        marker: {"generation": "<gen>", "started": instant}, written first
//	P data/<gen>/<seq>  the objects: seq 0 the base, 1, 2, … the increments
//
// <gen> is 16 hex digits (the start in Unix milliseconds, then 16 random
// bits), <seq> 10 decimal digits. Keys with a slash are never archives
// (backup.ValidKey), so GET /api/backups lists none of them.
//
// # Object format
//
// All integers are little-endian; uvarint and varint as encoding/binary.
// The whole object goes through Options.Seal (encryption) when set.
//
//	8   magic "SBSTRM" 0x00 0x01
//	1   kind: 0 base, 1 increment
//	8   generation
//	8   seq
//	8   capture instant, Unix nanoseconds
//	32  Prev: the sum of the object before (zero for a base)
//	uv  number of entries, at most 65,536; then each entry:
//	      uv name length (1–255), name (a ValidName)
//	      1  op: 1 append, 2 replace (offset 0), 3 delete (no bytes)
//	      8  identity of the file's content
//	      uv offset of the bytes
//	      uv number of marks, then each: uv end minus the end before
//	         (the offset for the first), varint commit instant (Unix ns),
//	         1 coarse
//	      uv number of bytes: the last mark ends with them
//	      the bytes
//	      32 SHA-256 of the whole file after them
//	32  sum: SHA-256 of everything above
//	8   "SBEND" 0x00 0x00 0x01
//
// An object is checked whole: its trailer's sum, its Prev against the
// object read before it, its generation and seq against its key, each
// file's SHA-256 after each entry, and the decoder's bounds (FuzzReader).
//
// # Point in time
//
// Restore with At keeps, of every file, the bytes whose commit mark is at
// or before At: a mark is the instant the fsync covering those frames
// returned, before the store acknowledged them, so every write
// acknowledged before At is restored and none committed after it. Marks
// end on frame boundaries, so every file restored is a valid journal.
// A deletion takes effect from the capture that saw it. A journal keeps
// at most journal.MaxMarks marks in memory; a shipper that falls that
// far behind (the bucket down under load) sees the oldest merged into a
// coarse mark, and a restore whose At falls inside one says so
// (Result.Exact false): it keeps only the writes surely committed by At.
// So does a journal's first mark after the server starts (the frames it
// held at start), which only a base ever ships.
//
// # Faults
//
// Objects are written under their final key only whole (a Put, or a
// multipart upload completed last), and are never changed once the next
// one exists: a kill -9 at any point leaves the bucket consistent, at
// worst with a marker whose base never came (skipped by a restore,
// deleted by the next prune) or an increment retried under the same key.
// While the bucket fails, the changes wait in the journals (the shipper
// keeps only offsets and hashes in memory), each try is bounded (30 s,
// plus 1 s per MiB), tries back off up to 30 s apart, a warning is logged
// (once a minute) and an info once the bucket caught up. A restore reads
// the objects in order and stops at the first that is missing, altered
// or unreadable, restoring the state at the object before and saying so
// (Result.Damage); a generation whose base is unreadable is passed over
// for the one before.
//
// # Retention
//
// Once an hour the shipper deletes the generations no restore point of
// the last Options.Retention (7 days) needs: all older than the newest
// one that started before the window. Objects are deleted newest first
// and the marker last, so an interrupted prune leaves a shorter, still
// consistent generation.
//
// # Restore
//
// Restore builds the data dir in a temporary dir beside the target and
// renames it into place once every file and dir is synced: a failed or
// interrupted restore leaves the target as it was. While it applies one
// object it fetches the next 8 increments (up to 4 MiB each; a larger
// one, and the base, are streamed in their turn), since each is a GET; a
// fetch ahead that fails is read again in its turn, so only an object
// that cannot be read then counts as damage.
//
// # Cost
//
// The shipper's goroutine takes the captures and encodes, hashes and
// seals the objects; their upload runs beside it. Options.Go starts it:
// the server passes lowprio.Go, so that under a CPU saturated by
// requests the shipping gets what they leave. A small object is
// encoded into a buffer kept from one object to the next.
// BenchmarkShipIncrement (a capture and a 64 KiB increment into memory)
// takes about 0.7 ms and 124 KB per step. Under wrk on /api/health, with
// an object shipped every 0.35 s or so, the shipper's goroutines and the
// S3 client's connections were 1.0–1.3% of the server's CPU (perf at
// 999 Hz), most of it the SHA-256 of the bytes shipped; versitygw on the
// same machine used 1–2% of what the server used. A restore from versitygw on loopback
// of 1,000,000 logs and 100,000 users (a 273 MB base) took 1.6–2.8 s,
// latest or a day back, and 3.1–6.5 s for a chain of 2,900 increments
// (0.6–1.6 ms each; three runs on a loaded machine, most of the CPU the
// SHA-256 checks and the writes): a generation's MaxObjects bounds it
// (TestStreamDayBackFigures in httpapi/app, STRONGBOX_STREAM_FIGURES=1).
package stream
