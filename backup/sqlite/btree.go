package sqlite

import (
	"encoding/binary"
	"fmt"
)

// B-tree page types (the first byte of a page's header).
const (
	pageTableInterior = 0x05
	pageTableLeaf     = 0x0d
)

// treePage is one level of a walk down a table b-tree.
type treePage struct {
	pgno   uint32
	buf    []byte
	hdr    int // offset of the page header (100 on page 1)
	leaf   bool
	ncells int
	next   int // next cell to visit; ncells = the right-most child
}

// Rows iterates over the rows of a table in rowid order. It reads one
// page per tree level at a time; it is not safe for concurrent use.
type Rows struct {
	db      *DB
	table   Table
	stack   []*treePage
	free    []*treePage // page buffers to reuse
	visited map[uint32]struct{}
	started bool
	closed  bool
	rowid   int64
	values  []any
	raw     []any  // the record's values, before mapping to columns
	over    []byte // buffer for payloads that spill to overflow pages
	err     error
}

// Rows returns an iterator over the rows of the named table, in rowid
// order. Tables WITHOUT ROWID are refused.
func (d *DB) Rows(name string) (*Rows, error) {
	t, err := d.Table(name)
	if err != nil {
		return nil, err
	}
	if t.WithoutRowID {
		return nil, fmt.Errorf("sqlite: table %q is WITHOUT ROWID, which this reader does not walk", t.Name)
	}
	if t.schemaErr != nil {
		return nil, t.schemaErr
	}
	if t.RootPage == 0 {
		return nil, fmt.Errorf("sqlite: table %q has no b-tree (a virtual table)", t.Name)
	}
	return d.rowsOf(t), nil
}

func (d *DB) rowsOf(t Table) *Rows {
	return &Rows{db: d, table: t, visited: map[uint32]struct{}{}}
}

// push reads page pgno as the next level of the walk.
func (r *Rows) push(pgno uint32) error {
	if len(r.stack) >= maxDepth {
		return corrupt(pgno, "table %q: the b-tree is deeper than %d levels", r.table.Name, maxDepth)
	}
	if _, seen := r.visited[pgno]; seen {
		return corrupt(pgno, "table %q: the page is reached twice in the b-tree (a cycle)", r.table.Name)
	}
	r.visited[pgno] = struct{}{}
	var p *treePage
	if n := len(r.free); n > 0 {
		p, r.free = r.free[n-1], r.free[:n-1]
	} else {
		p = &treePage{buf: make([]byte, r.db.pageSize)}
	}
	if err := r.db.readPage(pgno, p.buf); err != nil {
		return err
	}
	p.pgno, p.next, p.hdr = pgno, 0, 0
	if pgno == 1 {
		p.hdr = 100
	}
	if err := r.db.checkPage(p); err != nil {
		return err
	}
	r.stack = append(r.stack, p)
	return nil
}

// checkPage reads a table b-tree page's header and checks that the cell
// pointer array lies inside the page.
func (d *DB) checkPage(p *treePage) error {
	b, h := p.buf, p.hdr
	switch b[h] {
	case pageTableLeaf:
		p.leaf = true
	case pageTableInterior:
		p.leaf = false
	default:
		return corrupt(p.pgno, "page type 0x%02x is not a table b-tree page", b[h])
	}
	p.ncells = int(binary.BigEndian.Uint16(b[h+3:]))
	hdrLen := 8
	if !p.leaf {
		hdrLen = 12
	}
	if end := h + hdrLen + 2*p.ncells; end > d.usable {
		return corrupt(p.pgno, "%d cells do not fit the page's cell pointer array", p.ncells)
	}
	return nil
}

// cell returns the offset of cell i of p, checked to lie in the page.
func (d *DB) cell(p *treePage, i int) (int, error) {
	hdrLen := 8
	if !p.leaf {
		hdrLen = 12
	}
	ptrs := p.hdr + hdrLen
	off := int(binary.BigEndian.Uint16(p.buf[ptrs+2*i:]))
	if off < ptrs+2*p.ncells || off >= d.usable {
		return 0, corrupt(p.pgno, "cell %d's offset %d is outside the cell content area", i, off)
	}
	return off, nil
}

// Next advances to the next row; false at the end or on an error (see
// Err).
func (r *Rows) Next() bool {
	if r.err != nil || r.closed {
		return false
	}
	if !r.started {
		r.started = true
		if r.err = r.push(r.table.RootPage); r.err != nil {
			return false
		}
	}
	for len(r.stack) > 0 {
		p := r.stack[len(r.stack)-1]
		if p.leaf && p.next < p.ncells {
			r.err = r.readRow(p, p.next)
			p.next++
			return r.err == nil
		}
		if !p.leaf && p.next <= p.ncells {
			child, err := r.childOf(p)
			p.next++
			if err == nil {
				err = r.push(child)
			}
			if r.err = err; err != nil {
				return false
			}
			continue
		}
		r.stack = r.stack[:len(r.stack)-1]
		r.free = append(r.free, p)
	}
	return false
}

// childOf returns the child page of interior page p that comes next: the
// left child of cell p.next, or the right-most pointer after the last.
func (r *Rows) childOf(p *treePage) (uint32, error) {
	if p.next == p.ncells {
		return binary.BigEndian.Uint32(p.buf[p.hdr+8:]), nil
	}
	off, err := r.db.cell(p, p.next)
	if err != nil {
		return 0, err
	}
	if off+4 > r.db.usable {
		return 0, corrupt(p.pgno, "cell %d runs past the end of the page", p.next)
	}
	return binary.BigEndian.Uint32(p.buf[off:]), nil
}

// readRow decodes cell i of leaf p: payload size, rowid, payload (with its
// overflow chain), and maps the record to the table's columns.
func (r *Rows) readRow(p *treePage, i int) error {
	d := r.db
	off, err := d.cell(p, i)
	if err != nil {
		return err
	}
	area := p.buf[off:d.usable]
	size, n := varint(area)
	if n == 0 {
		return corrupt(p.pgno, "cell %d: the payload size runs past the end of the page", i)
	}
	rowid, m := varint(area[n:])
	if m == 0 {
		return corrupt(p.pgno, "cell %d: the rowid runs past the end of the page", i)
	}
	r.rowid = int64(rowid)
	payload, err := r.payload(p, i, area[n+m:], size)
	if err != nil {
		return err
	}
	r.raw, err = decodeRecord(r.raw[:0], payload, d.enc)
	if err != nil {
		return corrupt(p.pgno, "cell %d (rowid %d): %v", i, r.rowid, err)
	}
	r.values = r.table.mapRow(r.raw, r.rowid)
	return nil
}

// payload returns the cell's whole payload of size bytes: the local part
// in the page, then the overflow chain. The local size follows SQLite's
// formula for table leaf cells.
func (r *Rows) payload(p *treePage, i int, local []byte, size uint64) ([]byte, error) {
	d := r.db
	u := uint64(d.usable)
	maxLocal := u - 35
	if size <= maxLocal {
		if size > uint64(len(local)) {
			return nil, corrupt(p.pgno, "cell %d: its %d-byte payload runs past the end of the page", i, size)
		}
		return local[:size], nil
	}
	// A payload larger than the whole database is a lie.
	if size > uint64(d.nPages)*u {
		return nil, corrupt(p.pgno, "cell %d: payload size %d exceeds the database's size", i, size)
	}
	minLocal := (u-12)*32/255 - 23
	k := minLocal + (size-minLocal)%(u-4)
	if k > maxLocal {
		k = minLocal
	}
	if k+4 > uint64(len(local)) {
		return nil, corrupt(p.pgno, "cell %d: its local payload runs past the end of the page", i)
	}
	r.over = append(r.over[:0], local[:k]...)
	next := binary.BigEndian.Uint32(local[k:])
	if err := r.readOverflow(next, size); err != nil {
		return nil, fmt.Errorf("cell %d of page %d: %w", i, p.pgno, err)
	}
	return r.over, nil
}

// readOverflow appends the overflow chain starting at page next to r.over
// until it holds size bytes. The chain's length follows from size, so a
// cycle cannot make it endless.
func (r *Rows) readOverflow(next uint32, size uint64) error {
	d := r.db
	buf := make([]byte, d.pageSize)
	for uint64(len(r.over)) < size {
		if next == 0 {
			return corrupt(0, "the overflow chain ends %d bytes short of the payload", size-uint64(len(r.over)))
		}
		if err := d.readPage(next, buf); err != nil {
			return err
		}
		n := min(uint64(d.usable-4), size-uint64(len(r.over)))
		r.over = append(r.over, buf[4:4+n]...)
		next = binary.BigEndian.Uint32(buf)
	}
	return nil
}

// RowID returns the current row's rowid.
func (r *Rows) RowID() int64 { return r.rowid }

// Values returns the current row's values, one per column of the table:
// nil, int64, float64, string or []byte. A rowid alias gives the rowid;
// a column the row predates (ALTER TABLE ADD COLUMN) gives its default.
// The slice is the caller's.
func (r *Rows) Values() []any { return r.values }

// Err returns the error that ended the iteration, if any.
func (r *Rows) Err() error { return r.err }

// Close ends the iteration. It never fails.
func (r *Rows) Close() error {
	r.stack, r.free, r.visited = nil, nil, nil
	r.closed = true
	return nil
}

// mapRow maps a record's values to the table's columns.
func (t *Table) mapRow(raw []any, rowid int64) []any {
	if len(t.Columns) == 0 {
		return append([]any(nil), raw...)
	}
	out := make([]any, len(t.Columns))
	j := 0
	for i, c := range t.Columns {
		if c.virtual {
			continue
		}
		switch {
		case c.RowIDAlias:
			out[i] = rowid
		case j >= len(raw):
			out[i] = c.Default
			if b, ok := c.Default.([]byte); ok {
				out[i] = append([]byte{}, b...)
			}
		default:
			out[i] = raw[j]
		}
		j++
	}
	return out
}
