package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
)

// Errors the reader returns, wrapped with details (the page number and
// what is wrong, or what to do).
var (
	// ErrNoTable: the database has no table of that name.
	ErrNoTable = errors.New("sqlite: no such table")
	// ErrLocked: another process has the database open.
	ErrLocked = errors.New("sqlite: the database is in use by another process")
	// ErrHotJournal: a rollback journal holds an unfinished transaction.
	ErrHotJournal = errors.New("sqlite: the database has a hot rollback journal")
	// ErrCorrupt: the file is not a valid SQLite 3 database (truncated,
	// damaged or crafted).
	ErrCorrupt = errors.New("sqlite: the database file is corrupt")
)

// maxDepth bounds the depth of a b-tree walk: SQLite's own cursors stop
// at 20 levels (BTCURSOR_MAX_DEPTH), so no valid file is deeper.
const maxDepth = 20

// Text encodings of the database header (offset 56).
const (
	encUTF8    = 1
	encUTF16LE = 2
	encUTF16BE = 3
)

// DB is a read-only view of one SQLite 3 database file and its WAL, as
// they were when it was opened. It is safe for concurrent use.
type DB struct {
	file     io.ReaderAt
	fileSize int64
	wal      *walIndex // nil: no WAL, or no committed frame in it
	pageSize int
	usable   int    // page size less the reserved bytes at the end of each page
	nPages   uint32 // database size in pages
	enc      byte
	closers  []io.Closer

	schemaOnce sync.Once
	tables     []Table
	schemaErr  error
}

func corrupt(pgno uint32, format string, args ...any) error {
	if pgno == 0 {
		return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	return fmt.Errorf("%w: page %d: %s", ErrCorrupt, pgno, fmt.Sprintf(format, args...))
}

// OpenReaderAt reads a database of dbSize bytes from db and, when wal is
// not nil, its write-ahead log of walSize bytes. It checks no lock: the
// caller guarantees that no process writes to them. Close does not close
// db or wal.
func OpenReaderAt(db io.ReaderAt, dbSize int64, wal io.ReaderAt, walSize int64) (*DB, error) {
	d := &DB{file: db, fileSize: dbSize}
	if wal != nil && walSize > 0 {
		w, err := readWAL(wal, walSize)
		if err != nil {
			return nil, err
		}
		d.wal = w
	}
	if err := d.readHeader(); err != nil {
		return nil, err
	}
	return d, nil
}

// readHeader reads the 100-byte database header of page 1 (from the WAL
// when a committed frame holds page 1) and sets the page geometry.
func (d *DB) readHeader() error {
	hdr := make([]byte, 100)
	if off, ok := d.wal.lookup(1); ok {
		if _, err := d.wal.r.ReadAt(hdr, off); err != nil {
			return corrupt(1, "reading the header from the WAL: %v", err)
		}
	} else {
		if d.fileSize < 100 {
			return corrupt(0, "the file is %d bytes, shorter than the 100-byte database header", d.fileSize)
		}
		if _, err := d.file.ReadAt(hdr, 0); err != nil {
			return corrupt(1, "reading the header: %v", err)
		}
	}
	if string(hdr[:16]) != "SQLite format 3\x00" {
		return corrupt(0, "no SQLite 3 header string at the start of the file")
	}
	pageSize := int(binary.BigEndian.Uint16(hdr[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize > 65536 || pageSize&(pageSize-1) != 0 {
		return corrupt(1, "page size %d is not a power of two from 512 to 65536", pageSize)
	}
	if hdr[19] > 2 {
		return corrupt(1, "file format read version %d is not 1 (rollback) or 2 (WAL)", hdr[19])
	}
	reserved := int(hdr[20])
	if pageSize-reserved < 480 {
		return corrupt(1, "%d reserved bytes leave less than 480 usable bytes of a %d-byte page", reserved, pageSize)
	}
	if hdr[21] != 64 || hdr[22] != 32 || hdr[23] != 32 {
		return corrupt(1, "payload fractions %d/%d/%d are not 64/32/32", hdr[21], hdr[22], hdr[23])
	}
	d.pageSize, d.usable = pageSize, pageSize-reserved
	switch enc := binary.BigEndian.Uint32(hdr[56:]); enc {
	case 0, encUTF8, encUTF16LE, encUTF16BE:
		d.enc = byte(enc)
		if enc == 0 {
			d.enc = encUTF8 // a database that holds no table yet
		}
	default:
		return corrupt(1, "text encoding %d is not 1 (UTF-8), 2 (UTF-16le) or 3 (UTF-16be)", enc)
	}
	return d.setSize(hdr)
}

// setSize sets the database size in pages: the last commit frame's size
// with a WAL, else the header's size when the header says it is valid
// (as SQLite does), else the file's size.
func (d *DB) setSize(hdr []byte) error {
	filePages := d.fileSize / int64(d.pageSize)
	if d.wal != nil {
		if d.wal.pageSize != d.pageSize {
			return corrupt(1, "the WAL's page size %d differs from the database's %d", d.wal.pageSize, d.pageSize)
		}
		// Every page a commit adds to the database is written to the
		// WAL, so the pages are in the file or in the WAL.
		if int64(d.wal.dbPages) > filePages+int64(len(d.wal.pages)) {
			return corrupt(0, "the WAL's last commit makes the database %d pages, more than the file and WAL hold", d.wal.dbPages)
		}
		d.nPages = d.wal.dbPages
		return nil
	}
	n := int64(binary.BigEndian.Uint32(hdr[28:]))
	if n == 0 || binary.BigEndian.Uint32(hdr[24:]) != binary.BigEndian.Uint32(hdr[92:]) {
		n = filePages
	}
	if n > filePages {
		return corrupt(1, "the header says %d pages, the file holds %d", n, filePages)
	}
	if n < 1 {
		return corrupt(0, "the file holds no whole page of %d bytes", d.pageSize)
	}
	d.nPages = uint32(n)
	return nil
}

// Close closes the files Open opened. The DB is unusable afterwards.
func (d *DB) Close() error {
	var first error
	for _, c := range d.closers {
		if err := c.Close(); err != nil && first == nil {
			first = err
		}
	}
	d.closers = nil
	return first
}

// readPage reads page pgno into buf (len(buf) == d.pageSize): from its
// newest committed WAL frame, else from the database file.
func (d *DB) readPage(pgno uint32, buf []byte) error {
	if pgno < 1 || pgno > d.nPages {
		return corrupt(pgno, "page number out of range 1..%d", d.nPages)
	}
	if off, ok := d.wal.lookup(pgno); ok {
		if _, err := d.wal.r.ReadAt(buf, off); err != nil {
			return corrupt(pgno, "reading its WAL frame: %v", err)
		}
		return nil
	}
	off := int64(pgno-1) * int64(d.pageSize)
	if off+int64(d.pageSize) > d.fileSize {
		return corrupt(pgno, "beyond the end of the file (%d bytes)", d.fileSize)
	}
	if _, err := d.file.ReadAt(buf, off); err != nil {
		return corrupt(pgno, "reading: %v", err)
	}
	return nil
}

// Tables lists the tables of sqlite_schema (type 'table') in the order
// the schema stores them.
func (d *DB) Tables() ([]Table, error) {
	d.schemaOnce.Do(func() { d.tables, d.schemaErr = d.readSchema() })
	if d.schemaErr != nil {
		return nil, d.schemaErr
	}
	return append([]Table(nil), d.tables...), nil
}

// Table returns the table of that name, compared case-insensitively for
// ASCII letters as SQLite does; the error wraps ErrNoTable when there is
// none.
func (d *DB) Table(name string) (Table, error) {
	tables, err := d.Tables()
	if err != nil {
		return Table{}, err
	}
	for _, t := range tables {
		if equalFoldASCII(t.Name, name) {
			return t, nil
		}
	}
	return Table{}, fmt.Errorf("%w: %q", ErrNoTable, name)
}

func equalFoldASCII(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// schemaTable describes sqlite_schema itself, whose root is page 1.
var schemaTable = Table{Name: "sqlite_schema", RootPage: 1, Columns: []Column{
	{Name: "type"}, {Name: "name"}, {Name: "tbl_name"}, {Name: "rootpage"}, {Name: "sql"},
}}

// readSchema walks sqlite_schema and parses the CREATE TABLE statement of
// every table.
func (d *DB) readSchema() ([]Table, error) {
	rows := d.rowsOf(schemaTable)
	defer rows.Close()
	var tables []Table
	for rows.Next() {
		v := rows.Values()
		typ, _ := v[0].(string)
		if typ != "table" {
			continue
		}
		name, _ := v[1].(string)
		root, _ := v[3].(int64)
		sql, _ := v[4].(string)
		if root < 0 || root > int64(d.nPages) {
			return nil, corrupt(1, "sqlite_schema gives table %q root page %d, outside 1..%d", name, root, d.nPages)
		}
		t := Table{Name: name, SQL: sql, RootPage: uint32(root)}
		// A virtual table (root page 0) has no b-tree, and its CREATE
		// VIRTUAL TABLE statement no column list to read. A statement
		// the parser cannot read fails Rows of that table only.
		if root != 0 {
			def, err := parseCreateTable(sql)
			t.WithoutRowID, t.Columns = def.WithoutRowID, def.Columns
			if err != nil {
				t.schemaErr = fmt.Errorf("%w: sqlite_schema: table %q: %v", ErrCorrupt, name, err)
			}
		}
		tables = append(tables, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading sqlite_schema: %w", err)
	}
	return tables, nil
}
