// Package logstore is the request-log store: an append-only set of segment
// files with an in-memory, column-oriented index that answers the logs API
// (interface §4.3: list with filter, sort and paging; one entry by id;
// hourly stats) in milliseconds over millions of entries.
//
// # Writing
//
// Add never touches the disk: it queues the entry for a writer goroutine,
// which commits the queue as one batch (group commit) once the oldest
// queued entry has waited Options.FlushInterval (at most 200 ms), or at
// once when a Flush is waiting or the queue holds 16,384 entries. A commit
// takes at most 65,536 entries, writes their frames with one write call (one
// per segment when it fills a segment), fsyncs, and only then adds
// the rows to the index, so every entry a query can see is durable. Close
// commits everything queued. A kill -9 loses only the entries not yet
// committed, those of the last window (more only while the disk cannot keep
// up and the queue grows), and never corrupts a segment: a torn last frame
// is truncated on the next Open.
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
// Other files in the directory are ignored.
//
// Each segment is a journal (package strongbox/logstore/journal: an 8-byte
// header, then frames of marker, length, CRC-32C and payload), one frame
// per entry. The last segment is the active one; the writer starts a new
// one when the active segment reaches 64 MiB or when the UTC day changes,
// so retention can delete whole files: a segment is deleted as soon as its
// newest entry is older than logs.maxDays days, so an entry lives between
// maxDays and maxDays+1 days. maxDays 0 deletes every segment (after
// starting an empty one, which keeps the sequence and the id key).
//
// Open recovers each segment as the journal does, in lenient mode: a torn
// tail is truncated; a damaged frame in the middle is skipped, and the
// skipped bytes are reported through Options.Logger, while every other
// record is kept. A record whose frame is intact but whose payload does not
// decode (or is out of sequence) is skipped with a warning too.
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
//	         bit 2 authId stored, bit 3 error stored (bits 1-3 only for kind 1)
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
//	str      message                         only without flag bit 1 (with it
//	                                         the message is method + " " + url)
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
// bytes with its frame.
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
// sequence number, and dictionary ids for method, auth, url, referer,
// remoteIP, userIP, userAgent and message (each distinct string is held
// once), plus a reference to the rarer parts (authId, error and details;
// the decoded data of other logs). That is about 70 bytes per request log
// and lets filters, sorts and stats run without decoding anything; List
// reads only the entries of the page it returns back from their segments.
//
// # Queries
//
// A filter is compiled by package strongbox/filterlang against getters that
// read the columns directly: data.status reads the status column, data.url
// the dictionary, and only the attributes of other logs come from a map
// (data.status is still bound as a number column while no other log has a
// non-number "status"). Comparisons of created with a string or a date
// macro are rewritten to integer comparisons of the time (the fixed-width
// time text sorts like the time). A filter that reads a single column with
// few distinct values (level, message, data.status, data.method, data.auth,
// data.url, data.referer, data.userAgent) is evaluated once per distinct
// value rather than once per row. Scans run on all cores, one range of
// chunks each; a sorted page keeps its rows in a bounded heap (top-k), and
// insertion order (or a leading rowid key) takes the first matches met.
package logstore
