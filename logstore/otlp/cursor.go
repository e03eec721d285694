package otlp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Cursor is the position of the export in the log store: every entry of
// the directory with id key Key up to sequence number Seq was acknowledged
// by the receiver (or skipped for a 400).
type Cursor struct {
	Key uint64
	Seq int64
}

const cursorMagic = "strongbox-otlp-cursor 1"

// cursorStep, when set, is called before each step of saveCursor ("write",
// "sync", "rename", "syncdir"); an error stops the save there, as a crash
// would. Tests set it.
var cursorStep func(step string) error

func step(name string) error {
	if cursorStep != nil {
		return cursorStep(name)
	}
	return nil
}

// saveCursor writes c to path durably and atomically: a temporary file in
// the same directory, fsynced, renamed over path, and the directory
// fsynced. A crash at any point leaves the old cursor or the new one.
func saveCursor(path string, c Cursor) (err error) {
	tmp := path + ".tmp"
	if err := step("write"); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("otlp: save the cursor: %w", err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			err = fmt.Errorf("otlp: save the cursor: %w", err)
		}
	}()
	if _, err := fmt.Fprintf(f, "%s %016x %d\n", cursorMagic, c.Key, c.Seq); err != nil {
		return err
	}
	if err := step("sync"); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	err, f = f.Close(), nil
	if err != nil {
		return err
	}
	if err := step("rename"); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if err := step("syncdir"); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// loadCursor reads the cursor saved at path: the zero Cursor (export from
// the first entry) when there is none, and an error for a file that is not
// a cursor.
func loadCursor(path string) (Cursor, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Cursor{}, nil
	}
	if err != nil {
		return Cursor{}, fmt.Errorf("otlp: read the cursor: %w", err)
	}
	return parseCursor(string(b))
}

func parseCursor(s string) (Cursor, error) {
	rest, ok := strings.CutPrefix(s, cursorMagic+" ")
	f := strings.Fields(rest)
	if !ok || len(f) != 2 || len(f[0]) != 16 || !strings.HasSuffix(rest, "\n") || strings.Count(rest, "\n") != 1 {
		return Cursor{}, errors.New("otlp: the cursor file is malformed")
	}
	key, err1 := strconv.ParseUint(f[0], 16, 64)
	seq, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil || seq < 0 {
		return Cursor{}, errors.New("otlp: the cursor file is malformed")
	}
	return Cursor{Key: key, Seq: seq}, nil
}
