// Package pocketbase reads the data of a PocketBase v0.23 to v0.31 data
// dir (pb_data) or of a backup archive PocketBase made: its collections,
// the rows of their tables, the OAuth2 links and auth origins, the
// settings and the logs. It reads the SQLite files with package
// backup/sqlite and never writes to them; turning what it reads into a
// strongbox data dir is its caller's work.
package pocketbase

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"strongbox/backup/sqlite"
)

// Errors Open (ErrVersion) and Settings (ErrEncrypted) return, wrapped
// with details and what to do.
var (
	// ErrVersion: the files are not those of a PocketBase version this
	// package knows (v0.23 to v0.31).
	ErrVersion = errors.New("not a PocketBase v0.23 to v0.31 data dir")
	// ErrEncrypted: the settings are encrypted and no key was given, or
	// the key does not open them.
	ErrEncrypted = errors.New("the settings are encrypted")
)

// Options configure Open.
type Options struct {
	// EncryptionKey is the value of the variable PocketBase's
	// --encryptionEnv named (32 bytes, AES-256-GCM); "" when none.
	EncryptionKey string
	// EncryptionEnv is the name of that variable, for the messages of
	// ErrEncrypted; "" = "NAME".
	EncryptionEnv string
	// TempDir is where an archive's database files are extracted;
	// "" = os.TempDir().
	TempDir string
	// MaxArchiveBytes bounds what is extracted from an archive; 0 = a
	// default.
	MaxArchiveBytes int64
}

// Collection is a row of PocketBase's _collections table.
type Collection struct {
	ID, Name, Type string // Type is "base", "auth" or "view"
	System         bool
	// Fields are the field objects as PocketBase stores them (its
	// collection API shows the same objects).
	Fields  []map[string]any
	Indexes []string
	// Rules are nil when only superusers may (PocketBase's null rule).
	ListRule, ViewRule, CreateRule, UpdateRule, DeleteRule *string
	// Options is the options column: an auth collection's options
	// (authRule, manageRule, authAlert, oauth2, passwordAuth, mfa, otp,
	// the token configurations and the mail templates), a view's
	// viewQuery.
	Options          map[string]any
	Created, Updated time.Time
}

// Row is a row of a collection's table: column name to SQLite value
// (nil, int64, float64, string or []byte), as stored. What each field type
// of PocketBase v0.31.0 stores, given the affinity of the column type it
// declares:
//   - bool: int64 0 or 1.
//   - number: int64 when the number is whole (7.0 too), float64 otherwise.
//   - text, email, url, editor, password (the bcrypt hash), single select,
//     file and relation: string ("" when empty).
//   - date and autodate: string, "2006-01-02 15:04:05.000Z" or "".
//   - multiple select, file and relation, json and geoPoint: the JSON text
//     as a string; but a json value that is a bare number is an int64 or
//     float64 (its column type JSON has numeric affinity), and a NULL
//     json value is nil.
type Row map[string]any

// ExternalAuth is a row of _externalAuths: an OAuth2 link.
type ExternalAuth struct {
	ID, CollectionRef, RecordRef, Provider, ProviderID string
	Created, Updated                                   time.Time
}

// AuthOrigin is a row of _authOrigins: a device a record signed in from.
type AuthOrigin struct {
	ID, CollectionRef, RecordRef, Fingerprint string
	Created, Updated                          time.Time
}

// Log is a row of auxiliary.db's _logs.
type Log struct {
	ID      string
	Created time.Time
	Level   int
	Message string
	Data    json.RawMessage // the data column exactly as stored
}

// Data is an open PocketBase data dir or archive. Its methods stream rows
// in table order and stop at the first error fn returns, which they return
// as it is; their own errors name the file, the table and, for a row that
// does not decode, its id and column.
type Data struct {
	path    string     // what Open was given, for messages
	tmp     string     // the dir Open extracted an archive into, "" for a folder
	db, aux *sqlite.DB // data.db, auxiliary.db (nil when absent)
	opts    Options
}

// Open opens a pb_data folder of a stopped PocketBase, or a .zip backup
// archive PocketBase made (its database files are extracted into a private
// dir in Options.TempDir, which Close removes). It checks that the schema
// is PocketBase v0.23 to v0.31's (ErrVersion). It refuses a database another process has open,
// or one with a hot rollback journal, and applies the committed frames of
// a write-ahead log (data.db-wal) left behind.
func Open(path string, opts Options) (*Data, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("pocketbase: %w", err)
	}
	d := &Data{path: path, opts: opts}
	dir := path
	if !fi.IsDir() {
		if dir, err = extract(path, opts); err != nil {
			return nil, err
		}
		d.tmp = dir
	}
	if err := d.open(dir); err != nil {
		return nil, errors.Join(err, d.Close())
	}
	return d, nil
}

// open opens the databases of dir and checks their schema.
func (d *Data) open(dir string) error {
	main := filepath.Join(dir, "data.db")
	if _, err := os.Stat(main); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("pocketbase: %s has no data.db: not a PocketBase data dir (pb_data)", d.path)
		}
		return fmt.Errorf("pocketbase: %w", err)
	}
	var err error
	if d.db, err = openDB(main, d.name("data.db")); err != nil {
		return err
	}
	if err := checkSchema(d.db, d.name("data.db")); err != nil {
		return err
	}
	aux := filepath.Join(dir, "auxiliary.db")
	if _, err := os.Stat(aux); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if d.aux, err = openDB(aux, d.name("auxiliary.db")); err != nil {
		return err
	}
	return checkColumns(d.aux, d.name("auxiliary.db"), "_logs", logColumns)
}

// name names file of the data dir or archive in messages.
func (d *Data) name(file string) string {
	return filepath.Join(d.path, file)
}

// Unchanged returns an error when data.db, auxiliary.db or their
// write-ahead logs changed since Open (sqlite.DB.Unchanged): a PocketBase
// that held no SQLite lock when Open checked (one that has just made a
// backup, which releases them) wrote while they were read. A caller
// that needs one consistent state checks it once it has read everything.
func (d *Data) Unchanged() error {
	for file, db := range map[string]*sqlite.DB{"data.db": d.db, "auxiliary.db": d.aux} {
		if db == nil {
			continue
		}
		if err := db.Unchanged(); err != nil {
			return userError{"pocketbase: PocketBase wrote to " + d.name(file) + " while it was read, so it is still running: stop it, or import a backup archive", err}
		}
	}
	return nil
}

// Close releases the files (and removes what Open extracted).
func (d *Data) Close() error {
	var errs []error
	for _, db := range []*sqlite.DB{d.db, d.aux} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	d.db, d.aux = nil, nil
	if d.tmp != "" {
		errs = append(errs, os.RemoveAll(d.tmp))
		d.tmp = ""
	}
	return errors.Join(errs...)
}
