package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultOutboxMax is how many .eml files the outbox keeps: past it, the
// oldest are removed as a new one is written.
const DefaultOutboxMax = 1000

// Outbox writes mails as RFC 5322 .eml files into a folder (<data
// dir>/mail/ in the server): the transport of a server without SMTP, so
// that an operator can read the mails of a fresh install (its OTPs, its
// verification links) from the data dir.
//
// A file is named by the time it was written and a random suffix
// (20261123T165500.123456789Z-0123abcd.eml, so that names sort by age),
// written to a temporary file, synced and renamed into place: a reader
// sees a whole mail or none. Writes are serialized.
type Outbox struct {
	Dir string
	// Max is how many .eml files to keep; 0 = DefaultOutboxMax.
	Max int

	mu sync.Mutex
}

// Write writes m into the folder (creating it) and returns the file's
// path, then removes the oldest .eml files past Max. now is both the
// message's Date and the time in the file's name.
func (o *Outbox) Write(m *Message, now time.Time) (string, error) {
	var data bytes.Buffer
	if err := m.Encode(&data, now); err != nil {
		return "", err
	}
	var rb [4]byte
	if _, err := rand.Read(rb[:]); err != nil {
		return "", fmt.Errorf("mail: outbox: %w", err)
	}
	name := now.UTC().Format("20060102T150405.000000000Z") + "-" + hex.EncodeToString(rb[:]) + ".eml"

	o.mu.Lock()
	defer o.mu.Unlock()
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return "", fmt.Errorf("mail: outbox: %w", err)
	}
	path := filepath.Join(o.Dir, name)
	if err := writeFileSync(path, data.Bytes()); err != nil {
		return "", fmt.Errorf("mail: outbox: %w", err)
	}
	return path, o.trim()
}

// writeFileSync writes data to path through a synced temporary file and
// a rename, then syncs the folder.
func writeFileSync(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*.eml")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// trim removes the oldest .eml files past Max. The caller holds mu.
func (o *Outbox) trim() error {
	max := o.Max
	if max <= 0 {
		max = DefaultOutboxMax
	}
	entries, err := os.ReadDir(o.Dir)
	if err != nil {
		return fmt.Errorf("mail: outbox: %w", err)
	}
	var names []string
	for _, e := range entries {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".eml") && !strings.HasPrefix(e.Name(), ".") {
			names = append(names, e.Name())
		}
	}
	if len(names) <= max {
		return nil
	}
	slices.Sort(names)
	for _, n := range names[:len(names)-max] {
		if err := os.Remove(filepath.Join(o.Dir, n)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("mail: outbox: %w", err)
		}
	}
	return nil
}
