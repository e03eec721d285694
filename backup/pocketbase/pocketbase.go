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
	"time"
)

// Errors Open returns, wrapped with details.
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
// (nil, int64, float64, string or []byte), as stored; JSON columns are
// strings.
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
// in table order and stop at the first error fn returns.
type Data struct {
	// filled in by the implementation
}

var errTodo = errors.New("pocketbase: not implemented yet")

// Open opens a pb_data folder of a stopped PocketBase, or a .zip backup
// archive PocketBase made. It refuses a database another process has open,
// or one with a hot rollback journal, and applies the committed frames of
// a write-ahead log (data.db-wal) left behind.
func Open(path string, opts Options) (*Data, error) { return nil, errTodo }

// Close releases the files (and removes what Open extracted).
func (d *Data) Close() error { return errTodo }

// Collections returns every collection, system ones included.
func (d *Data) Collections() ([]Collection, error) { return nil, errTodo }

// Rows calls fn with each row of c's table (none for a view).
func (d *Data) Rows(c Collection, fn func(Row) error) error { return errTodo }

// ExternalAuths calls fn with each OAuth2 link.
func (d *Data) ExternalAuths(fn func(ExternalAuth) error) error { return errTodo }

// AuthOrigins calls fn with each auth origin.
func (d *Data) AuthOrigins(fn func(AuthOrigin) error) error { return errTodo }

// Count returns the number of rows of a table (such as _mfas and _otps,
// which an import skips), 0 when it does not exist.
func (d *Data) Count(table string) (int, error) { return 0, errTodo }

// Settings returns the settings as PocketBase's settings API shows them
// (decrypted with Options.EncryptionKey when they are encrypted), nil when
// none are stored.
func (d *Data) Settings() (json.RawMessage, error) { return nil, errTodo }

// Logs calls fn with each row of auxiliary.db's _logs; none when there is
// no auxiliary.db.
func (d *Data) Logs(fn func(Log) error) error { return errTodo }
