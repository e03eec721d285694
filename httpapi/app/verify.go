package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"strongbox/authn"
	"strongbox/backup"
	"strongbox/httpapi/settings"
	"strongbox/logstore/journal"
)

// Verifying that an archive restores. backup.Verify checks an archive's
// structure and every file against its manifest, but it imports no store,
// so an archive whose manifest agrees with damaged files, or lists none,
// passes it. The check here (backup.Limits.Check, which upload and restore
// run through Verify before they answer) opens the stores from the
// archive as a start on the restored data would:
//
//   - the auth and settings journals are required (a data dir without
//     them is a new, empty one: restoring it would create a new first
//     superuser), and each is replayed by its store's own Open;
//   - every log segment's header is read as the log store reads it (a
//     segment whose header is damaged would be set aside, its logs lost).
//     The records are not replayed: the log store skips a malformed one.
//
// The files are copied into scratch files in the backups folder, named
// with backup's temporary prefix (".tmp-"), so that List never shows them
// and a crash leaves nothing the next start (backup.Dir.CleanTemp) does
// not remove; they are removed when the check ends. Their size is bounded
// by the archive's limits (Limits.MaxUncompressed), which Verify applied.

// The files of a data dir that an archive must hold, and its log store's
// folder.
const (
	authFile     = "auth.journal"
	settingsFile = "settings.journal"
	logsDir      = "logs"
)

// requiredFiles are the stores a data dir needs, by file.
var requiredFiles = []string{authFile, settingsFile}

// withStoresCheck returns limits whose Check opens the stores of an archive
// (checkStores) with scratch files in dataDir's backups folder, unless
// limits has a Check already.
func withStoresCheck(limits backup.Limits, dataDir string) backup.Limits {
	if limits.Check == nil {
		scratch := filepath.Join(dataDir, "backups")
		limits.Check = func(f backup.Files) error { return checkStores(scratch, f) }
	}
	return limits
}

// checkStores opens the stores of the archive's files f, with scratch
// files in the folder scratch, as a start on the restored data would. It
// returns an *backup.ArchiveError naming the archive's entries if they do
// not open.
func checkStores(scratch string, f backup.Files) error {
	listed := make(map[string]bool, len(f.Manifest.Files))
	for _, mf := range f.Manifest.Files {
		listed[mf.Name] = true
	}
	for _, name := range requiredFiles {
		if !listed[name] {
			return &backup.ArchiveError{Reason: fmt.Sprintf("it has no %s, which a data dir needs", name)}
		}
	}
	var rnd [12]byte
	rand.Read(rnd[:])
	sc := scratchFiles{prefix: filepath.Join(scratch, ".tmp-verify-"+hex.EncodeToString(rnd[:])+"-"), files: f}
	defer sc.removeAll()
	if err := sc.open(authFile, -1, openAuth); err != nil {
		return err
	}
	if err := sc.open(settingsFile, -1, openSettings); err != nil {
		return err
	}
	for _, mf := range f.Manifest.Files {
		if path.Dir(mf.Name) == logsDir && strings.HasSuffix(mf.Name, ".seg") {
			if err := sc.open(mf.Name, journal.HeaderSize, openSegmentHeader); err != nil {
				return err
			}
		}
	}
	return nil
}

// scratchFiles are the scratch copies of one check, all named prefix and
// something more.
type scratchFiles struct {
	prefix string
	files  backup.Files
	n      int
}

// open copies the archive's file name (its first limit bytes, or all of
// it if limit < 0) to a new scratch file and calls opener on that file's
// path. An error of opener refuses the archive, named by its entry.
func (sc *scratchFiles) open(name string, limit int64, opener func(path string) error) error {
	sc.n++
	p := fmt.Sprintf("%s%d-%s", sc.prefix, sc.n, path.Base(name))
	if err := sc.copy(name, p, limit); err != nil {
		return err
	}
	if err := opener(p); err != nil {
		// The stores' errors name the path they opened: name the
		// archive's entry instead, never the server's folder.
		reason := strings.ReplaceAll(err.Error(), p, name)
		return &backup.ArchiveError{Reason: fmt.Sprintf("%s does not open as the server would open it: %s", name, reason)}
	}
	return nil
}

// copy writes the archive's file name (at most limit bytes if limit >= 0)
// to the new file p, and fsyncs nothing: the copy is thrown away.
func (sc *scratchFiles) copy(name, p string, limit int64) (err error) {
	rc, err := sc.files.Open(name)
	if err != nil {
		return err
	}
	defer rc.Close()
	var r io.Reader = rc
	if limit >= 0 {
		r = io.LimitReader(rc, limit)
	}
	out, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("app: scratch copy of %s: %w", name, err)
	}
	defer func() { err = errors.Join(err, out.Close()) }()
	if _, err := io.Copy(out, r); err != nil {
		if errors.Is(err, backup.ErrInvalidArchive) {
			return err
		}
		return fmt.Errorf("app: scratch copy of %s: %w", name, err)
	}
	return nil
}

// removeAll removes every scratch file of the check, including any a
// store made beside its journal (a compaction's).
func (sc *scratchFiles) removeAll() {
	dir, base := filepath.Split(sc.prefix)
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), base) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// openAuth replays the auth journal at p as the auth store does at start.
func openAuth(p string) error {
	hasher, err := authn.NewHasher(bcrypt.MinCost, 1)
	if err != nil {
		return err
	}
	st, err := authn.Open(p, authn.Options{Hasher: hasher, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	return st.Close()
}

// openSettings replays the settings journal at p as the settings store
// does at start.
func openSettings(p string) error {
	st, err := settings.Open(p, settings.Options{})
	if err != nil {
		return err
	}
	return st.Close()
}

// openSegmentHeader reads the header of the log segment (its first bytes)
// at p as the log store does at start: a segment whose header is not a
// journal's is set aside there, its logs lost.
func openSegmentHeader(p string) error {
	f, err := journal.Open(p, journal.Options{}, nil)
	if err != nil {
		return err
	}
	return f.Close()
}
