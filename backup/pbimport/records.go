package pbimport

import (
	"fmt"
	"strconv"
	"time"

	"strongbox/authn"
	"strongbox/backup/pocketbase"
)

// records imports the records of every auth collection imported (the
// step "records"), streaming them from the source in batches of
// opts.BatchSize, one journal frame each.
func (im *importer) records() error {
	for _, id := range im.order {
		ic := im.imported[id]
		err := inBatches(im.opts.BatchSize, func(add func(*authn.Record) error) error {
			return im.src.Rows(ic.src, func(row pocketbase.Row) error { return add(recordOf(ic.col, row)) })
		}, func(batch []*authn.Record) error {
			skips, err := im.st.Auth.ImportRecords(ic.col, batch)
			if err != nil {
				return fmt.Errorf("import the records of %s: %w", q(ic.col.Name), err)
			}
			ic.report.Records.add(len(batch)-len(skips), skips)
			return im.ctx.Err()
		})
		if err != nil {
			return fmt.Errorf("read the records of %s: %w", q(ic.src.Name), err)
		}
	}
	return nil
}

// inBatches stores what read gives (through add) n items at a time, and
// the rest at the end: each batch is one call of store, which must not
// keep the slice.
func inBatches[T any](n int, read func(add func(T) error) error, store func([]T) error) error {
	batch := make([]T, 0, n)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := store(batch)
		batch = batch[:0]
		return err
	}
	err := read(func(v T) error {
		if batch = append(batch, v); len(batch) < n {
			return nil
		}
		return flush()
	})
	if err != nil {
		return err
	}
	return flush()
}

// recordOf returns the record that row of PocketBase's table of c holds:
// the built-in columns, and the columns of c's own fields converted from
// SQLite values to the field's type.
func recordOf(c *authn.Collection, row pocketbase.Row) *authn.Record {
	r := &authn.Record{
		ID:              sqlText(row["id"]),
		Email:           sqlText(row["email"]),
		EmailVisibility: sqlBool(row["emailVisibility"]),
		Verified:        sqlBool(row["verified"]),
		PasswordHash:    sqlText(row["password"]),
		TokenKey:        sqlText(row["tokenKey"]),
		Created:         sqlTime(row["created"]),
		Updated:         sqlTime(row["updated"]),
		Fields:          map[string]any{},
	}
	for _, f := range c.Fields {
		if f.System || f.Type == authn.FieldAutodate {
			continue
		}
		v, ok := row[f.Name]
		if !ok || v == nil {
			continue
		}
		switch f.Type {
		case authn.FieldBool:
			r.Fields[f.Name] = sqlBool(v)
		case authn.FieldNumber:
			r.Fields[f.Name] = sqlNumber(v)
		default:
			r.Fields[f.Name] = sqlText(v)
		}
	}
	return r
}

// sqlText returns a SQLite value as text.
func sqlText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return ""
}

// sqlBool returns a SQLite value as a bool: PocketBase stores 0 and 1
// (and, written by hand, "true" or "false").
func sqlBool(v any) bool {
	switch x := v.(type) {
	case int64:
		return x != 0
	case float64:
		return x != 0
	case string:
		b, _ := strconv.ParseBool(x)
		return b
	}
	return false
}

// sqlNumber returns a SQLite value as a number: float64, or the text
// itself for the field's validation to refuse when it is not one.
func sqlNumber(v any) any {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return sqlText(v)
}

// pbTimeLayout is the layout of PocketBase's stored dates.
const pbTimeLayout = "2006-01-02 15:04:05.000Z"

// sqlTime returns a PocketBase date column as a time; zero when it is not
// one.
func sqlTime(v any) time.Time {
	t, err := time.Parse(pbTimeLayout, sqlText(v))
	if err != nil {
		return time.Time{}
	}
	return t
}

// links imports _externalAuths and _authOrigins (the step "links"), and
// counts the transient rows of _mfas and _otps.
func (im *importer) links() error {
	err := inBatches(im.opts.BatchSize, func(add func(*authn.ExternalAuth) error) error {
		return im.src.ExternalAuths(func(l pocketbase.ExternalAuth) error {
			return add(&authn.ExternalAuth{ID: l.ID, CollectionID: l.CollectionRef, RecordID: l.RecordRef,
				Provider: l.Provider, ProviderID: l.ProviderID, Created: l.Created, Updated: l.Updated})
		})
	}, func(batch []*authn.ExternalAuth) error {
		skips, err := im.st.Auth.ImportExternalAuths(batch)
		im.report.ExternalAuths.add(len(batch)-len(skips), skips)
		return err
	})
	if err != nil {
		return fmt.Errorf("import _externalAuths: %w", err)
	}
	err = inBatches(im.opts.BatchSize, func(add func(*authn.AuthOrigin) error) error {
		return im.src.AuthOrigins(func(o pocketbase.AuthOrigin) error {
			return add(&authn.AuthOrigin{ID: o.ID, CollectionID: o.CollectionRef, RecordID: o.RecordRef,
				Fingerprint: o.Fingerprint, Created: o.Created, Updated: o.Updated})
		})
	}, func(batch []*authn.AuthOrigin) error {
		skips, err := im.st.Auth.ImportAuthOrigins(batch)
		im.report.AuthOrigins.add(len(batch)-len(skips), skips)
		return err
	})
	if err != nil {
		return fmt.Errorf("import _authOrigins: %w", err)
	}
	for _, t := range transientTables {
		n, err := im.src.Count(t.name)
		if err != nil {
			return fmt.Errorf("count %s: %w", t.name, err)
		}
		if n > 0 {
			im.skip("transient", fmt.Sprintf("%s (%d rows)", t.name, n), t.reason)
		}
	}
	return nil
}
