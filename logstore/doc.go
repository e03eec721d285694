// Package logstore is the append-only storage layer under every store of
// strongbox: the request-log store itself (this package), and, in package
// logstore/journal, the journal that the auth records (auth.journal) and
// the settings document (settings.journal, package httpapi/settings)
// are written to. Data is appended, and fsynced before it is
// acknowledged, never edited in place; space comes back by compacting a
// journal into a new file or by deleting whole log segments.
//
// The request-log store is an append-only set of segment
// files with an in-memory, column-oriented index that answers the logs API
// (interface §4.3: list with filter, sort and paging; one entry by id;
// hourly stats) in milliseconds over millions of entries: a filtered,
// sorted page over a million logs takes a few milliseconds. What a request
// log holds, and which secrets are redacted before it is added, is package
// strongbox/httpapi/api's ("Request logs"); the settings that govern the store
// (logs.maxDays, logs.minLevel, logs.logIP, logs.logAuthId) are package
// strongbox/httpapi/settings's.
//
// # Writing
//
// Add never touches the disk: it queues the entry for a writer goroutine,
// which commits the queue as one batch (group commit) once the oldest
// queued entry has waited Options.FlushInterval (at most 200 ms), or at
// once when a Flush is waiting or the queue holds 16,384 entries. The queue
// is bounded (MaxPending entries, MaxPendingBytes = 64 MiB of their text,
// counting the batch being written): past either bound Add drops new
// entries, with a rate-limited warning. A commit
// takes at most 65,536 entries, writes their frames with one write call (one
// per segment when it fills a segment), fsyncs, and only then adds
// the rows to the index, so every entry a query can see is durable. Close
// commits everything queued. A kill -9 loses only the entries not yet
// committed, those of the last window (more only while the disk cannot keep
// up and the queue grows), and never corrupts a segment: a torn last frame
// is truncated on the next Open.
//
// A batch the disk refuses (full, or failing) is lost, and only that batch:
// the journal cuts the segment back to its last good frame and the next
// batch is written as if the failed one had never been tried, so logging
// resumes by itself once space is freed. Health reports the failure until a
// batch is written again; it is logged when it starts, at most once a
// minute while it lasts, and when it ends. Creating a segment that fails
// leaves no file behind and is retried after a back-off (1 s doubling to a
// minute), the active segment growing past its size meanwhile; and since a
// segment is only rotated once it holds entries, a disk with room for a
// header but not an entry collects at most one empty segment, the active
// one. Every fsync slower than the flush interval is logged as a warning:
// it breaks the promise that an entry is durable within it.
//
// Deleting needs no space, so retention works on a full disk (see
// Segments), and Open does too: it writes nothing but the first segment,
// and a store whose first segment cannot be created opens without one,
// serving what it holds, losing new entries (counted, and logged as
// above) and reporting the full disk through Health. A degraded store's
// Health probes the disk, at most once a second, by creating the missing
// segment or testing the active one, so it sees the disk freed without a
// write; the next commit sees it too, after the back-off.
//
// # Segments
//
// A data directory (<datadir>/logs) holds segment files named
//
//	<first seq: 16 hex digits>-<id key: 16 hex digits>.seg
//
// for example 0000000000000001-3c5f0a9e12b7d884.seg. first seq is the
// sequence number of the segment's first record; sequence numbers (the
// rowid of the API) grow by one per entry across segments for the life of
// the directory. The id key is a random number drawn when the directory's
// first segment is created and copied to every later one (see ids below).
// Beside each segment that no longer grows lies its index sidecar,
// <first seq>-<id key>.idx (see Index sidecars); other files in the
// directory are ignored.
//
// Each segment is a journal (package strongbox/logstore/journal: an 8-byte
// header, then frames of marker, length, CRC-32C and payload), one frame
// per entry. The last segment is the active one; the writer starts a new
// one when the active segment reaches 64 MiB (or an eighth of
// Options.MaxBytes, when smaller) or when the UTC day changes, so retention
// can delete whole files: a segment is deleted as soon as its newest entry
// is older than logs.maxDays days, so an entry lives between maxDays and
// maxDays+1 days. maxDays 0 deletes every segment (after starting an empty
// one, which keeps the sequence and the id key). When the active segment
// has to go and the disk has no room for the empty one, the active one
// goes all the same, and the empty one is created after the deletion, or
// when there is room again, from the sequence and key in memory (a restart
// before that starts a new key and the sequence at 1, as SQLite's rowid
// after every row is deleted). Segment files the file system refuses to
// delete are no longer indexed and are tried again by every retention pass.
//
// The segments' total size is capped by Options.MaxBytes (1 GiB by
// default): after each commit, and at Open, while the segments hold more,
// the oldest segment is deleted (never the active one), with an Info log,
// exactly as retention deletes it. Since the index is proportional to what
// the segments hold (see Index), the cap bounds the index's memory too,
// whatever clients put in their requests.
//
// Every string stored is valid UTF-8: Add replaces invalid bytes by U+FFFD
// (JSON output would anyway). The frame marker's first byte, 0xF5, never
// occurs in UTF-8, so no logged string (a User-Agent, say) can hold a frame
// that recovery, searching for the next marker after damage, would take
// for a real one.
//
// Open recovers each segment as the journal does, in lenient mode: a torn
// tail is truncated; a damaged frame in the middle is skipped, and the
// skipped bytes are reported through Options.Logger, while every other
// record is kept. A record whose frame is intact but whose payload does not
// decode (or is out of sequence) is skipped with a warning too.
//
// # Index sidecars
//
// Decoding every frame is what made a start slow (14 to 17 s of CPU over
// 10 million logs), so a segment that no longer grows keeps its part of
// the index in a sidecar, and Open loads that instead: it reads no frame
// of the segment, and checks only the journal header and the size
// (journal.OpenSized). A sidecar is written, into a temporary file
// (<name>.idx.tmp) that is fsynced and then renamed, in the background
// when a segment stops growing (rotation), for each segment a start had
// to decode (the first start after an upgrade or a restore: backups and
// the continuous backup copy the segments only), and at Close for every
// segment without a current one, the active one included, after sealing
// its last chunk. It holds, in about 28 bytes a log (12% of the
// segment's size; not counted in MaxBytes), the segment's sealed chunks
// as they are in memory: per chunk its sequence numbers, offsets, times,
// execution times, every table of values with its local ids and counts,
// the extras, the decoded data of other logs (as JSON text), the hours;
// the strings those name, each once with its lookup domain (local ids,
// which the load's merge interns into the dictionary); and the foreign ids.
//
//	size  field
//	8     "SBLIDX" 0x00, format version (1)
//	8     first seq of the segment
//	8     id key of the segment
//	8     the segment's size when the sidecar was written
//	4     CRC-32C of the segment's last 4,096 bytes (at most)
//	4     CRC-32C of the body
//	8     length of the body
//	…     body: strings, foreign ids, chunks (sidecar.go)
//
// A sidecar is used only when all of that matches: a segment that grew
// since (the active one after a crash), was cut back or changed at its
// end, a sidecar of another format version, of another segment, torn,
// truncated or otherwise damaged, falls back to decoding the segment (a
// damaged one is logged as a warning), and a good sidecar replaces it.
// The body is checked as it is read, every count against the bytes left
// before it is allocated, every local id, dictionary id, row, offset and
// sequence number against what it names (FuzzDecodeSidecar), so that no
// sidecar can make a query fail. A sidecar that cannot be written (a full
// disk) is logged and costs only a decoding start. Retention deletes a
// segment's sidecar with it; Open deletes sidecars and temporary files
// whose segment is gone. A sealed segment damaged in place after its
// sidecar was written keeps its rows in the index, which holds every
// field of a request log: the damage shows when a frame is read back (an
// other log's data, a backup restored) or at a start without the sidecar.
//
// # Payload
//
// All integers are little-endian; uvarint and varint are the encodings of
// encoding/binary (varint is zig-zag); str is a uvarint length followed by
// that many bytes (UTF-8 text, or JSON text where noted).
//
//	size     field
//	1        kind: 1 request log, 2 other log
//	uvarint  seq: sequence number, 1 … 36^9-1
//	varint   created: Unix milliseconds (UTC), years 1 … 9999
//	varint   level: int32
//	1        flags: bit 0 id stored, bit 1 message derived,
//	         bit 2 authId stored, bit 3 error stored,
//	         bit 4 message derived from the unescaped url
//	         (bits 1-4 only for kind 1; not bits 1 and 4 together)
//	str      id, 15 bytes [a-z0-9]          only with flag bit 0
//
// then for a request log (kind 1):
//
//	varint   status: int32
//	8        execTime: float64 bits (milliseconds)
//	str      method
//	str      url
//	str      auth
//	str      referer
//	str      remoteIP
//	str      userIP
//	str      userAgent
//	str      message                         only without flag bits 1 and 4
//	                                         (with bit 1 the message is
//	                                         method + " " + url, with bit 4
//	                                         method + " " + PathUnescape(url),
//	                                         invalid UTF-8 replaced by U+FFFD,
//	                                         as the request logger writes it;
//	                                         bit 4 needs a url that unescapes)
//	str      authId                          only with flag bit 2
//	str      error                           only with flag bit 3
//	str      details, JSON text              only with flag bit 3
//
// or for any other log (kind 2):
//
//	str      message
//	str      data, a JSON object as text (empty: no attributes)
//
// Nothing may follow. A request log of a typical API call takes about 220
// bytes with its frame. The payload has no version field: a new format
// would take a new value of its first byte, the kind.
//
// # Ids
//
// An entry's id is 15 characters of [a-z0-9]: its sequence number in base
// 36 (9 digits) followed by 6 digits derived from the sequence number and
// the segment's id key. Get decodes the row from the id and checks the
// rest, so no id → row map is needed. Ids supplied by the caller in
// Entry.ID (15 characters of [a-z0-9], not in use) are stored in the
// record instead and kept in a map.
//
// # Index
//
// The index keeps, per entry, in chunks of 8,192 rows stored column by
// column: created, level, status, execTime, the frame's offset, the
// sequence number, the flags, and dictionary ids for method, auth, url,
// referer, remoteIP, userIP, userAgent and message (each distinct string is
// held once, in the dictionary), plus the rarer parts (authId, error and
// details; the decoded data of other logs). That lets filters, sorts and
// stats run without decoding anything; List reads only the entries of the
// page it returns back from their segments.
//
// The columns are narrow (column.go). A chunk has its own table of the
// distinct values of each column of values (level, status and the
// dictionary ids), and a row holds a local id into it: no byte when the
// chunk has one value, one byte up to 256, else two (a chunk has at most
// 8,192 rows). Level, status, method, auth and the flags share one local
// id, naming their combination (a few dozen per chunk). Times are offsets from a base
// of the chunk, in 3 bytes when the chunk spans less than 4.6 hours, else
// 4, else the times themselves; frame offsets likewise; an execution time
// is its nanoseconds in 4 bytes when that gives the same float64 back (all
// the request logger's under 4.3 s), else, exact, in a side table; the
// sequence numbers are implicit while they run without a gap. The chunk
// being filled holds 2-byte ids and 4-byte offsets in a builder's arrays
// and is compacted once, when it is sealed: full, at Open (every
// chunk; rows added later start a new one), when its segment stops
// growing, or at Close.
//
// A sealed chunk keeps summaries: its oldest and newest time, the rows per
// hour, and with at most 256 combinations or values the rows of each; its
// tables of values are the sets of levels, statuses, methods … it holds.
// A query uses them to skip a chunk, or to count its matches without
// visiting its rows (see Queries).
//
// The message of a request log is interned only when it is not derived
// (flag bits 1 and 4 above): a derived message is rebuilt from the method
// and url columns when a filter, a sort or an entry needs it, so a request
// does not hold its url twice.
//
// Memory: about 24 bytes per row, plus the tables of values (per chunk, 4
// bytes a distinct value: those of url and the IPs count), plus the
// dictionary: per distinct string its bytes (rounded up to the allocator's
// size class) and about 50 to 80 bytes of slice slot and map entry. With a
// realistic mix, where strings repeat, that is 28 bytes per request log at
// a million entries (TestHeapPerEntry); in the worst case, every request
// with its own long url, User-Agent and Referer, it is those strings plus
// about 850 bytes (TestHeapUniqueStrings). Every string in the dictionary
// is stored in a segment, so the index stays within about the segments'
// total size plus 40 bytes a row (the decoded attributes of other logs,
// which the server itself writes, excepted): MaxBytes bounds it.
// Store.IndexBytes estimates it, for the server's memory limit (package
// strongbox/httpapi/app, "Data dir", has the resident sizes measured).
//
// # Queries
//
// A filter is compiled by package strongbox/filterlang against getters that
// read the columns directly: data.status reads the status column, data.url
// the dictionary, and only the attributes of other logs come from a map
// (data.status is still bound as a number column while no other log has a
// non-number "status"). message derives the messages that are not interned
// into a buffer of the scan, without allocating. Comparisons of created
// with a string or a date macro are rewritten to integer comparisons of
// the time (the fixed-width time text sorts like the time).
//
// A filter whose top level is a run of && (or of ||) is split into its
// terms. A term that reads a single column of values (level, message,
// data.status, data.method, data.auth, data.url, data.referer,
// data.userAgent) is evaluated once per distinct value rather than once
// per row (for a derived message, once per url and method), into a memo
// table the scans of a query share and later queries of the same term
// reuse (memo.go; dropped when the dictionary is compacted). Per chunk the
// memo is read through the chunk's table of values: a chunk none of whose
// values match is skipped, one all of whose values match is taken whole,
// and the matches of a sealed chunk with few values are counted from its
// counts per value, so totalItems stays exact without visiting rows that
// cannot change it. The terms' answers are joined row by row otherwise.
//
// Scans run on all cores, one range of chunks each; a sorted page keeps
// its rows in a bounded heap (top-k), and insertion order (or a leading
// rowid key) takes the first matches met, then only counts. A sort led by
// created skips the chunks whose oldest or newest time cannot enter the
// full heap (so sort=-created over millions of rows visits a chunk or
// two); stats without a filter add up the chunks' rows per hour.
//
// The page's entries are then read back from their segments in the order
// of their offsets, one read of the file per run of neighbouring frames
// (journal.File.ReadFrames: the 50 newest entries are one system call,
// not 100), each checked by its CRC as always, and an entry read back
// holds its request's texts in one string. A Page and an Entry write their
// own JSON (AppendJSON), byte for byte what encoding/json writes for them
// (TestAppendJSONMatchesEncodingJSON compares the two over a varied set),
// in one pass instead of encoding/json's two (MarshalJSON, then a check
// and compaction of its output, which took most of a page's time); package
// strongbox/httpapi/api writes them so. GET
// /api/logs?sort=-created&perPage=50 through the API's real handler over
// a million seeded logs (issue 32), six runs alternating with the code
// before, load 4 to 7 on 2 cores:
//
//	go test -run '^$' -bench LogsList1M -benchtime 2000x -benchmem ./httpapi/api
//
// median 1,049 µs → 475 µs (five runs of six 444–484 µs, one 1,447 µs),
// allocations 872 → 482 a page. Over HTTP, p50 of 21 requests on one
// connection minus /api/health's, alternating with the binary before
// (load 3.6 to 3.9): 1.00 ms → 0.64 ms at 1M (seven runs each: 0.65–1.30
// → 0.52–0.96), 1.11 ms → 0.63 ms at 10M (three each: 0.97–1.65 →
// 0.61–0.66). What is left is the scan's top-k and count (about a third),
// decoding the 50 records and the 14 KB of the answer itself.
//
// Open's time (a start over 10 million logs) went, by its CPU profile, to
// interning the strings of each row into the dictionary (about 40%),
// building the chunks' tables of values (15%), decoding the records
// (12%) and the frames' CRCs (8%); a cache of recent strings in front of
// the dictionary's maps did not lower it. The index sidecars skip all of
// that (issue 32). BenchmarkOpen1M, CPU seconds of Open (load 9 to 12 on
// 2 cores): 1.33 and 1.53 before, 1.25 and 1.32 decoding (no sidecars),
// 0.072 and 0.078 from the sidecars (0.12 to 0.14 s elapsed). A start over
// 10 million logs (35 segments), from exec until /api/health answers, CPU
// seconds of the server: 15.2 to 19.1 before (wall 8.1 and 8.9 s at load
// 4.5, 24 to 37 s at load 7 to 14); the first start after the upgrade,
// decoding, 15.9 to 16.9; the starts after it, from the sidecars, 0.99 to
// 1.63 (wall 0.57 and 1.07 s at load 4.5, 1.3 to 4.6 s at load 7 to 13); after a kill -9, which leaves the active segment's
// sidecar stale, 1.79 (2.6 s at load 4.7). A rotation's sidecar costs
// about 40 ms of encoding under the index's read lock (BenchmarkEncodeSidecar,
// 64 MiB segment) and 28 bytes a log on disk.
// Sort keys compare straight from the columns (strings by dictionary id
// first), without building values; a sort led by a dictionary column
// (data.url, data.userAgent …) finds the page's values among the first row
// of each distinct value, then the rows among those that have them, so
// most rows cost a bit test. The whole data object is a filter field but
// not a sort field (§4.3 lists data.* attributes): it would serialise two
// rows per comparison.
//
// After reads the store in order from a sequence number (up to n entries
// after it, with the gap retention left, the newest sequence number and
// the directory's id key): the read of the OTLP export, which keeps its
// own cursor (package strongbox/logstore/otlp, run by
// strongbox/httpapi/app). It holds the index for reading, as List does.
//
// # The server's events
//
// The server's own events are in the same store, as PocketBase keeps its
// own, and on stderr ([Handler], a log/slog handler): level -4 debug, 0
// info, 4 warn, 8 error, the event as the message and its attributes as
// data (groups as nested objects; a string is cut at [MaxEventText] bytes,
// an event keeps at most [MaxEventAttrs] attributes). They never have
// data.type, so filter=data.type="request" lists the request logs and
// filter=data.type!="request" the events (level>0 the problems). An
// event's message has its non-printable characters written as Go escapes
// (\r, \n, \u2028). minLevel applies to events as to requests, from the
// change on; events logged while the store is closed (at start, during a
// restart or a restore) reach stderr only. List, single entry, filters and
// stats treat them as any entry (stats count every level).
//
// The server logs: start and stop with the version; backups created,
// uploaded, deleted, restored, and every one that failed or was refused
// with the reason (backup restore failed, backup upload failed: level 4; a
// failure of the server: 8); the automatic backups run, pruned or skipped;
// mail written to the outbox, refused by SMTP (the server's reason) or
// dropped for a full queue; OAuth2 providers' errors; storage degraded and
// recovered; and an audit trail PocketBase does not keep: every change to
// the settings (settings changed), a collection (collection created,
// updated, deleted) or a backup names the superuser (superuserId,
// superuserEmail) and, for an update, the top-level keys changed
// (changed: ["smtp"]), never a value. No entry holds a token, a password,
// an OTP code, the SMTP password, an S3 secret or a client secret (a test
// of package strongbox/httpapi/app sets each, triggers the events and
// scans every entry and stderr).
package logstore
