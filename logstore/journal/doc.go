// Package journal implements the framed, checksummed, append-only file that
// every strongbox store is built on: the auth records, the settings and the
// request-log segments.
//
// A store appends one frame per change, fsyncs before it acknowledges the
// change, and rebuilds its state at start by replaying the frames in order.
// Compaction writes the live state into a new file and renames it over the old
// one, so no change ever rewrites the whole store in place.
//
// # File format
//
// All integers are little-endian.
//
//	offset  size  field
//	0       8     file header: the bytes "SBJRNL" 0x00 0x01 (magic, format version 1)
//	8       …     frames, back to back
//
// One frame:
//
//	offset  size  field
//	0       4     frame marker 0xF5 0x1A 0xB0 0x5E
//	4       4     payload length n, at most MaxRecord
//	8       4     CRC-32C (Castagnoli) of bytes 4..8 (the length) followed by the payload
//	12      n     payload
//
// The marker's first byte, 0xF5, never occurs in UTF-8 text, so a JSON payload
// can never contain a frame marker, and after damage the reader finds the next
// frame by searching for the marker instead of trying every byte offset. The
// checksum covers the length, so a flipped bit in the length is caught like one
// in the payload.
//
// # Payloads
//
// The journal does not interpret payloads: each store defines its own and
// documents it in its package. The auth journal's records (auth.journal)
// are documented in package authn, the settings journal's
// (settings.journal) in package httpapi/settings, and the request-log
// segments' binary payload in package logstore.
//
// # Recovery
//
// Open reads the file from the start. A frame is valid when its marker,
// length and checksum hold and it lies wholly inside the file. At the first
// invalid frame the reader searches forward for the next valid one:
//
//   - none follows: the file ends in a torn write. The tail is truncated (and
//     the truncation fsynced), so the file holds exactly the valid prefix. A
//     crash during an append can only produce this case, and since a store
//     acknowledges only what it has fsynced, nothing acknowledged is lost.
//   - one follows: the damage is in the middle of the file (a bad disk block,
//     a stray write). With Options.Strict, Open refuses with a *CorruptError
//     naming the offset; otherwise the damaged bytes are skipped, reported
//     through Options.OnDamage, and everything else is kept.
//
// Either way Open never panics and never allocates more than the file holds:
// a length is checked against MaxRecord and the bytes left before it is read.
//
// OpenSized opens a journal without replaying it, for a caller that knows
// where its valid frames end (the log store's index sidecars): it checks
// the header and that the file has that size, and refuses it otherwise, so
// the caller falls back to Open. Damage since is then found when a frame is
// read back, each frame's CRC being checked then as always.
//
// # Full disks and failing storage
//
// A failed write, fsync or truncation never poisons the file, and never
// costs an acknowledged frame. Its error wraps ErrStorageFull (ENOSPC,
// EDQUOT) or ErrStorageFailed (any other I/O error), and:
//
//   - a failed write may have left part of its frames on disk: the file is
//     cut back to the end of the last good frame, and the cut is fsynced,
//     so that no frame that was refused can reappear after a crash;
//   - a failed fsync may have dropped pages the kernel could not write
//     (after which a retried fsync can wrongly succeed): the file is cut
//     back to its durable prefix, the end of the last successful Sync;
//   - a failed compaction removes its temporary file and leaves the old
//     file in use, unchanged;
//   - if a cut fails too (the disk is gone), it is retried before the next
//     write, which fails until it succeeds.
//
// The next write simply tries again, so a store recovers by itself once
// space is freed. Fault reports the last failure until a write, compaction
// or Probe succeeds; Probe lets a store with nothing to write find out.
// Open removes a file it created if it cannot write the header, so that
// retries on a full disk leave no empty files behind.
//
// Every fsync is timed; one slower than the durability window the store
// promises (Options.SyncWindow, DefaultSyncWindow) is logged as a warning.
//
// Tests inject these failures through Options.FS; package journaltest has a
// file system with a settable amount of free space and injectable errors.
//
// # Concurrency and snapshots
//
// A *File is safe for concurrent use. Append writes frames at the end with one
// write call; Sync makes everything appended so far durable; ReadAt reads one
// frame back. Committed reports the length of the durable prefix, and
// Capture returns that prefix, as of the call, as a Section with a
// descriptor of its own, so that a backup can capture several journals
// while their stores' writers are paused (each store's Capture method) and
// copy them after the writers resume: the copy is one consistent instant
// of each journal, and neither a compaction nor the removal of the file
// changes what a Section reads.
package journal
