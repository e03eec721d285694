package pocketbase

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"strongbox/backup/sqlite"
)

// The columns of the system tables, as PocketBase v0.31.0's init
// migrations create them (in data.db, and _logs in auxiliary.db). PocketBase
// v0.23 to v0.31 share them.
var (
	collectionColumns = []string{"id", "system", "type", "name", "fields", "indexes",
		"listRule", "viewRule", "createRule", "updateRule", "deleteRule", "options", "created", "updated"}
	paramColumns        = []string{"id", "value", "created", "updated"}
	externalAuthColumns = []string{"id", "collectionRef", "recordRef", "provider", "providerId", "created", "updated"}
	authOriginColumns   = []string{"id", "collectionRef", "recordRef", "fingerprint", "created", "updated"}
	logColumns          = []string{"id", "level", "message", "data", "created"}
)

// openDB opens a database file (called name in messages), its errors
// told in words a user acts on.
func openDB(path, name string) (*sqlite.DB, error) {
	db, err := sqlite.Open(path)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, sqlite.ErrLocked):
		return nil, userError{"pocketbase: PocketBase is still running on this data dir: stop it, or import a backup archive (" + name + " is open in another process)", err}
	case errors.Is(err, sqlite.ErrHotJournal):
		return nil, userError{"pocketbase: " + name + " has a rollback journal left by a write that did not finish: start PocketBase on this data dir once and stop it cleanly, or import a backup archive", err}
	case errors.Is(err, sqlite.ErrCorrupt):
		// The reader's message names the file it opened, which for an
		// archive is a temporary copy: keep what follows its prefix.
		detail := err.Error()
		if i := strings.Index(detail, "sqlite: "); i >= 0 {
			detail = detail[i+len("sqlite: "):]
		}
		return nil, userError{"pocketbase: " + name + " is damaged or not a SQLite database: " + detail, err}
	}
	return nil, fmt.Errorf("pocketbase: %w", err)
}

// userError is an error whose message says what to do in place of the
// reader's, which it wraps for errors.Is.
type userError struct {
	msg string
	err error
}

func (e userError) Error() string { return e.msg }
func (e userError) Unwrap() error { return e.err }

// checkSchema checks that db (data.db, called file in messages) is the
// main database of PocketBase v0.23 to v0.31.
func checkSchema(db *sqlite.DB, file string) error {
	if err := checkPreV023(db, file); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		cols []string
	}{
		{"_collections", collectionColumns},
		{"_params", paramColumns},
		{"_externalAuths", externalAuthColumns},
		{"_authOrigins", authOriginColumns},
	} {
		if err := checkColumns(db, file, t.name, t.cols); err != nil {
			return err
		}
	}
	return checkSuperusers(db, file)
}

// checkPreV023 refuses the data dir of a PocketBase before v0.23: an
// _admins table and no _superusers, or collections with a schema column.
func checkPreV023(db *sqlite.DB, file string) error {
	_, admins := db.Table("_admins")
	_, superusers := db.Table("_superusers")
	old := admins == nil && errors.Is(superusers, sqlite.ErrNoTable)
	if t, err := db.Table("_collections"); err == nil && slices.ContainsFunc(t.Columns, func(c sqlite.Column) bool { return c.Name == "schema" }) {
		old = true
	}
	if old {
		return fmt.Errorf("pocketbase: %s: %w: it is from a PocketBase before v0.23; open it with PocketBase v0.31 once first (which migrates it), stop it, then import it", file, ErrVersion)
	}
	return nil
}

// checkColumns checks that table has the columns want, no fewer and no
// more.
func checkColumns(db *sqlite.DB, file, table string, want []string) error {
	t, err := db.Table(table)
	if errors.Is(err, sqlite.ErrNoTable) {
		return fmt.Errorf("pocketbase: %s: %w: it has no table %s", file, ErrVersion, table)
	}
	if err != nil {
		return fmt.Errorf("pocketbase: %s: table %s: %w", file, table, err)
	}
	var extra, missing []string
	have := map[string]bool{}
	for _, c := range t.Columns {
		have[c.Name] = true
		if !slices.Contains(want, c.Name) {
			extra = append(extra, QuoteName(c.Name))
		}
	}
	for _, c := range want {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(extra) > 0 {
		return fmt.Errorf("pocketbase: %s: %w: table %s has columns PocketBase v0.31 does not create (%s); is it from a newer PocketBase?", file, ErrVersion, table, strings.Join(extra, ", "))
	}
	if len(missing) > 0 {
		return fmt.Errorf("pocketbase: %s: %w: table %s lacks the columns %s", file, ErrVersion, table, strings.Join(missing, ", "))
	}
	return nil
}

// checkSuperusers checks that _collections holds the _superusers auth
// collection and that its table is there.
func checkSuperusers(db *sqlite.DB, file string) error {
	found := false
	err := eachRow(db, "_collections", func(r Row) error {
		if r["name"] == "_superusers" && r["type"] == "auth" {
			found = true
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pocketbase: %s: %w", file, err)
	}
	if _, err := db.Table("_superusers"); !found || err != nil {
		return fmt.Errorf("pocketbase: %s: %w: it has no _superusers auth collection", file, ErrVersion)
	}
	return nil
}
