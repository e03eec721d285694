package pocketbase

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"strongbox/backup/sqlite"
)

// eachRow calls fn with each row of table, column name to value, in table
// order. A row written before a column was added (ALTER TABLE ADD COLUMN)
// has that column's default, and a column that is an alias of the rowid
// has the rowid, as SQLite reads them.
func eachRow(db *sqlite.DB, table string, fn func(Row) error) error {
	t, err := db.Table(table)
	if err != nil {
		return fmt.Errorf("table %s: %w", QuoteName(table), err)
	}
	rows, err := db.Rows(table)
	if err != nil {
		return fmt.Errorf("table %s: %w", QuoteName(table), err)
	}
	defer rows.Close()
	for rows.Next() {
		vals := rows.Values()
		r := make(Row, len(t.Columns))
		for i, c := range t.Columns {
			switch {
			case i < len(vals):
				r[c.Name] = vals[i]
			default:
				r[c.Name] = c.Default
			}
			if c.RowIDAlias && r[c.Name] == nil {
				r[c.Name] = rows.RowID()
			}
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("table %s: %w", QuoteName(table), err)
	}
	return rows.Close()
}

// decoder reads the columns of a row of a system table into Go values;
// its first error names the table, the row's id and the column.
type decoder struct {
	table string
	row   Row
	err   error
}

func (d *decoder) fail(col, format string, args ...any) {
	if d.err == nil {
		id, _ := d.row["id"].(string)
		d.err = fmt.Errorf("table %s, row %q, column %s: %s", d.table, id, col, fmt.Sprintf(format, args...))
	}
}

// text reads a TEXT column (a BLOB too, as SQLite's text functions would).
func (d *decoder) text(col string) string {
	switch v := d.row[col].(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	d.fail(col, "want text, have %s", typeName(d.row[col]))
	return ""
}

// rule reads a rule column: NULL is nil, only superusers may.
func (d *decoder) rule(col string) *string {
	if d.row[col] == nil {
		return nil
	}
	s := d.text(col)
	return &s
}

// integer reads an INTEGER or BOOLEAN column.
func (d *decoder) integer(col string) int64 {
	switch v := d.row[col].(type) {
	case int64:
		return v
	case float64:
		if v == float64(int64(v)) {
			return int64(v)
		}
	}
	d.fail(col, "want an integer, have %s", typeName(d.row[col]))
	return 0
}

// bool reads a BOOLEAN column: 0 or 1.
func (d *decoder) bool(col string) bool {
	n := d.integer(col)
	if n != 0 && n != 1 {
		d.fail(col, "want 0 or 1, have %d", n)
	}
	return n == 1
}

// time reads a date column: PocketBase's "2006-01-02 15:04:05.000Z"
// text, the zero time when empty.
func (d *decoder) time(col string) time.Time {
	s := d.text(col)
	t, err := parseTime(s)
	if err != nil {
		d.fail(col, "%v", err)
	}
	return t
}

// json decodes a JSON column into v.
func (d *decoder) json(col string, v any) {
	s := d.text(col)
	if d.err != nil {
		return
	}
	if err := json.Unmarshal([]byte(s), v); err != nil {
		d.fail(col, "%v", err)
	}
}

// parseTime parses a date as PocketBase stores it: UTC, "2006-01-02
// 15:04:05.000Z" (or with a T, or without milliseconds); "" is the zero
// time.
func parseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	layout := "2006-01-02 15:04:05Z"
	if strings.Contains(s, "T") {
		layout = "2006-01-02T15:04:05Z"
	}
	t, err := time.Parse(layout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("want a date like 2006-01-02 15:04:05.000Z, have %q", s)
	}
	return t, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "NULL"
	case int64:
		return "an integer"
	case float64:
		return "a real"
	case string:
		return "text"
	case []byte:
		return "a blob"
	}
	return fmt.Sprintf("%T", v)
}

// Collections returns every collection, system ones included.
func (d *Data) Collections() ([]Collection, error) {
	var cs []Collection
	err := eachRow(d.db, "_collections", func(r Row) error {
		c, err := decodeCollection(r)
		cs = append(cs, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pocketbase: %s: %w", d.name("data.db"), err)
	}
	return cs, nil
}

// decodeCollection decodes a row of _collections.
func decodeCollection(r Row) (Collection, error) {
	dec := &decoder{table: "_collections", row: r}
	c := Collection{
		ID: dec.text("id"), Name: dec.text("name"), Type: dec.text("type"),
		System:     dec.bool("system"),
		ListRule:   dec.rule("listRule"),
		ViewRule:   dec.rule("viewRule"),
		CreateRule: dec.rule("createRule"),
		UpdateRule: dec.rule("updateRule"),
		DeleteRule: dec.rule("deleteRule"),
		Created:    dec.time("created"),
		Updated:    dec.time("updated"),
	}
	dec.json("fields", &c.Fields)
	dec.json("indexes", &c.Indexes)
	dec.json("options", &c.Options)
	switch c.Type {
	case "base", "auth", "view":
	default:
		dec.fail("type", "want base, auth or view, have %q", c.Type)
	}
	return c, dec.err
}

// Rows calls fn with each row of c's table (none for a view).
func (d *Data) Rows(c Collection, fn func(Row) error) error {
	if c.Type == "view" {
		return nil
	}
	err := eachRow(d.db, c.Name, func(r Row) error { return stop(fn(r)) })
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("pocketbase: %s: collection %s: %w", d.name("data.db"), QuoteName(c.Name), err)
	}
	return unstop(err)
}

// errStop wraps the errors of a caller's fn, which the methods return as
// they are.
var errStop = errors.New("stop")

type stopError struct{ err error }

func (e stopError) Error() string        { return e.err.Error() }
func (e stopError) Is(target error) bool { return target == errStop }
func (e stopError) Unwrap() error        { return e.err }

// stop marks err (of a caller's fn) to pass through unwrapped.
func stop(err error) error {
	if err == nil {
		return nil
	}
	return stopError{err}
}

func unstop(err error) error {
	var s stopError
	if errors.As(err, &s) {
		return s.err
	}
	return err
}

// ExternalAuths calls fn with each OAuth2 link.
func (d *Data) ExternalAuths(fn func(ExternalAuth) error) error {
	return d.each(d.db, "data.db", "_externalAuths", func(dec *decoder) error {
		a := ExternalAuth{
			ID: dec.text("id"), CollectionRef: dec.text("collectionRef"), RecordRef: dec.text("recordRef"),
			Provider: dec.text("provider"), ProviderID: dec.text("providerId"),
			Created: dec.time("created"), Updated: dec.time("updated"),
		}
		if dec.err != nil {
			return dec.err
		}
		return stop(fn(a))
	})
}

// AuthOrigins calls fn with each auth origin.
func (d *Data) AuthOrigins(fn func(AuthOrigin) error) error {
	return d.each(d.db, "data.db", "_authOrigins", func(dec *decoder) error {
		o := AuthOrigin{
			ID: dec.text("id"), CollectionRef: dec.text("collectionRef"), RecordRef: dec.text("recordRef"),
			Fingerprint: dec.text("fingerprint"),
			Created:     dec.time("created"), Updated: dec.time("updated"),
		}
		if dec.err != nil {
			return dec.err
		}
		return stop(fn(o))
	})
}

// Logs calls fn with each row of auxiliary.db's _logs; none when there is
// no auxiliary.db.
func (d *Data) Logs(fn func(Log) error) error {
	if d.aux == nil {
		return nil
	}
	return d.each(d.aux, "auxiliary.db", "_logs", func(dec *decoder) error {
		l := Log{
			ID: dec.text("id"), Created: dec.time("created"),
			Level: int(dec.integer("level")), Message: dec.text("message"),
			Data: json.RawMessage(dec.text("data")),
		}
		if dec.err == nil && !json.Valid(l.Data) {
			dec.fail("data", "not JSON: %.40q", l.Data)
		}
		if dec.err != nil {
			return dec.err
		}
		return stop(fn(l))
	})
}

// each calls fn with a decoder on each row of a system table of db (file
// in messages); it returns fn's stop errors as they are.
func (d *Data) each(db *sqlite.DB, file, table string, fn func(*decoder) error) error {
	err := eachRow(db, table, func(r Row) error {
		return fn(&decoder{table: table, row: r})
	})
	if err != nil && !errors.Is(err, errStop) {
		return fmt.Errorf("pocketbase: %s: %w", d.name(file), err)
	}
	return unstop(err)
}

// Count returns the number of rows of a table (such as _mfas and _otps,
// which an import skips), 0 when it does not exist. It looks in data.db,
// then in auxiliary.db.
func (d *Data) Count(table string) (int, error) {
	for _, db := range []struct {
		db   *sqlite.DB
		file string
	}{{d.db, "data.db"}, {d.aux, "auxiliary.db"}} {
		if db.db == nil {
			continue
		}
		n, err := count(db.db, table)
		if errors.Is(err, sqlite.ErrNoTable) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("pocketbase: %s: table %s: %w", d.name(db.file), table, err)
		}
		return n, nil
	}
	return 0, nil
}

// count counts the rows of table without decoding them into a Row.
func count(db *sqlite.DB, table string) (int, error) {
	rows, err := db.Rows(table)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		n++
	}
	return n, rows.Err()
}
