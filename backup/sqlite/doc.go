// Package sqlite reads SQLite 3 database files without SQLite: enough of
// the file format (https://www.sqlite.org/fileformat2.html) and of the
// write-ahead log (https://www.sqlite.org/walformat.html) to list the
// tables of a database and walk every row of a table, in rowid order, as
// Go values. It never writes and runs no SQL.
//
// # What it reads
//
//   - The database header of page 1: page size (a power of two from 512
//     to 65536), reserved bytes at the end of each page, text encoding
//     (UTF-8; UTF-16le and UTF-16be text is decoded to UTF-8), and the
//     database size in pages.
//   - sqlite_schema (page 1): the tables (type 'table'), their root
//     pages, and their CREATE TABLE statements, from which a small
//     tokenizer takes the column names ("double", `backtick`, [bracket]
//     quoted or bare), DEFAULT literals, INTEGER PRIMARY KEY (the rowid
//     alias) and WITHOUT ROWID. Table constraints are skipped.
//   - Table b-trees: interior and leaf pages, cells, the record format
//     (serial types 0 to 9, text and blobs) and overflow chains, split
//     between page and chain by SQLite's formula for table leaf cells.
//     A row written before an ALTER TABLE ADD COLUMN gives the column's
//     DEFAULT, as SQLite does; a rowid alias gives the rowid; a VIRTUAL
//     generated column, which SQLite computes and never stores, gives nil.
//     Freelist pages and indexes are never read.
//   - The WAL (path+"-wal"), as SQLite's recovery reads it: a header with
//     a valid magic, version and checksum; frames up to the first whose
//     salts or cumulative checksum do not match; of those, only frames up
//     to the last commit frame count, the newest frame of each page
//     winning, and the last commit frame gives the database's size.
//     Uncommitted frames are ignored, as SQLite ignores them.
//
// # What it refuses
//
//   - Open refuses a database another process has open (ErrLocked): on
//     unix it asks with F_GETLK whether a process holds the fcntl locks
//     SQLite's unix VFS takes (the -shm file's byte 128, which every
//     connection to a WAL database holds shared; the SHARED, RESERVED
//     and PENDING bytes of the database file from 0x40000000), and on
//     Linux also whether another process has the file or its WAL open at
//     all (/proc/PID/fd), since a process can keep a connection without
//     holding any lock. On other systems it does not check. DB.Unchanged
//     then tells whether the files changed while they were read
//     (ErrChanged). Open refuses a non-empty path+"-journal"
//     (ErrHotJournal) whose header is not zeroed: a rollback journal of
//     an unfinished transaction.
//   - Rows refuses WITHOUT ROWID tables, virtual tables (listed with root
//     page 0) and tables whose CREATE TABLE statement the parser cannot
//     read (Tables still lists them, without columns).
//   - Anything that is not a valid file is ErrCorrupt, wrapped with the
//     page number and what is wrong.
//
// # Bounds
//
// A truncated, damaged or crafted file gives ErrCorrupt, never a panic,
// an endless loop or unbounded memory: page numbers must lie within the
// database size (itself bounded by the file and WAL sizes); a walk visits
// a page at most once and at most 20 levels deep (as SQLite's cursors);
// cell pointers and cells must lie inside the page; a payload is at most
// the size of the database, and its overflow chain is read for exactly as
// many pages as the payload needs; a record's header must fit its
// payload; the WAL's frames are bounded by its size; a CREATE TABLE
// statement is at most 1 MiB.
//
// Memory is one page per tree level, one payload, and the WAL's index
// (one entry per page the WAL holds): files are read with ReadAt, never
// loaded whole.
package sqlite
