package pbimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"strongbox/authn"
)

// Stores are the stores of the data dir an import writes, open in its
// temporary folder (Options.OpenStores): PocketBase's auth collections,
// records and links go into Auth, its settings into Settings. Close
// flushes and closes both (each fsyncs); the import calls it once, when
// the settings are in or on an error. The log store is the import's own
// (the step "logs").
type Stores struct {
	Auth     *authn.Store
	Settings Settings
	Close    func() error
}

// Settings is the settings store an import writes PocketBase's settings
// into, section by section; StoreSettings makes one of strongbox's
// settings store.
type Settings interface {
	// ImportSection decodes raw, PocketBase's settings section key, over
	// the stored section and saves the result, validated as an update of
	// the settings is; it returns the section as stored. Its error wraps
	// ErrSectionJSON when raw does not fit the section, is a
	// validation.Errors when the store refuses a value (then nothing
	// changed), or is the save's.
	ImportSection(key string, raw json.RawMessage) (stored any, err error)
	// LogRetention returns settings.logs.maxDays and minLevel as stored.
	LogRetention() (maxDays, minLevel int, err error)
}

// ErrSectionJSON marks a settings section of the wrong shape; its text
// is the report's reason.
var ErrSectionJSON = errors.New("its values do not fit strongbox's settings")

// SettingsStore is a settings store whose document is T: a struct with a
// field for each section, named in JSON as PocketBase names the section
// (meta, smtp, backups, logs, …). Update validates an edit as the API's
// updates are, and returns a validation.Errors when it refuses one.
// *settings.Store of the server is one.
type SettingsStore[T any] interface {
	Get() T
	Update(edit func(*T) error) (T, error)
}

// StoreSettings returns s as an import's Settings: a section is decoded
// into the field of T that JSON names as the section's key, and stored
// through Update, which validates it.
func StoreSettings[T any](s SettingsStore[T]) Settings { return storeSettings[T]{s} }

// storeSettings is StoreSettings's Settings.
type storeSettings[T any] struct{ s SettingsStore[T] }

func (a storeSettings[T]) ImportSection(key string, raw json.RawMessage) (any, error) {
	var probe T
	if sectionOf(&probe, key) == nil {
		return nil, fmt.Errorf("pbimport: the settings have no section %s", key)
	}
	next, err := a.s.Update(func(v *T) error {
		if err := json.Unmarshal(raw, sectionOf(v, key)); err != nil {
			return fmt.Errorf("%w: %v", ErrSectionJSON, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return sectionOf(&next, key), nil
}

func (a storeSettings[T]) LogRetention() (maxDays, minLevel int, err error) {
	v := a.s.Get()
	sec := sectionOf(&v, "logs")
	if sec == nil {
		return 0, 0, errors.New("pbimport: the settings have no section logs")
	}
	b, err := json.Marshal(sec)
	if err != nil {
		return 0, 0, err
	}
	var logs struct {
		MaxDays  int `json:"maxDays"`
		MinLevel int `json:"minLevel"`
	}
	if err := json.Unmarshal(b, &logs); err != nil {
		return 0, 0, fmt.Errorf("pbimport: the settings' logs section: %w", err)
	}
	return logs.MaxDays, logs.MinLevel, nil
}

// sectionOf returns a pointer to the exported field of the struct *v that
// JSON names key, or nil when there is none.
func sectionOf[T any](v *T, key string) any {
	rv := reflect.ValueOf(v).Elem()
	if rv.Kind() != reflect.Struct {
		return nil
	}
	for i := range rv.NumField() {
		f := rv.Type().Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); f.IsExported() && name == key {
			return rv.Field(i).Addr().Interface()
		}
	}
	return nil
}
