package pbimport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"strongbox/authn"
	"strongbox/backup/pocketbase"
	"strongbox/logstore/journal"
)

// Source is what Import reads: an open PocketBase data dir or backup
// archive (*pocketbase.Data), or, in tests, one built in memory.
type Source interface {
	Collections() ([]pocketbase.Collection, error)
	Rows(c pocketbase.Collection, fn func(pocketbase.Row) error) error
	ExternalAuths(fn func(pocketbase.ExternalAuth) error) error
	AuthOrigins(fn func(pocketbase.AuthOrigin) error) error
	Count(table string) (int, error)
	Settings() (json.RawMessage, error)
	Logs(fn func(pocketbase.Log) error) error
	// Unchanged reports an error when the source changed while it was
	// read; Import checks it after reading everything.
	Unchanged() error
}

var _ Source = (*pocketbase.Data)(nil)

// Options configure Import.
type Options struct {
	// OpenStores opens the auth and settings stores of a new data dir in
	// dir, the import's temporary folder, whose lock the import holds
	// (app.ImportStores); required.
	OpenStores func(dir string) (*Stores, error)
	// Dir is the data dir to create. It must not exist or be empty: an
	// import never merges into existing data.
	Dir string
	// DryRun converts into a temporary folder that is removed at the end
	// (logs are counted, not written) and leaves Dir untouched. The
	// folder is beside Dir, as an import's, or in $TMPDIR when Dir's
	// parent does not exist (a dry run creates no folder).
	DryRun bool
	// NoMail turns an imported smtp section that is enabled off, so that
	// the first serve sends no mail (they go to the outbox until SMTP is
	// turned on again); Report.Mail says which happened.
	NoMail bool
	// LogsMaxBytes caps the stored logs as the server will
	// (STRONGBOX_LOGS_MAX_MB); 0 = logstore's default.
	LogsMaxBytes int64
	// BatchSize is how many records, links or origins are committed per
	// journal frame, and how many logs are queued between flushes; 0 =
	// importBatch.
	BatchSize int
	// Now is the clock that decides which logs retention will drop; nil =
	// time.Now.
	Now func() time.Time
	// AfterStep, if set, is called after each step of the import (see
	// importSteps) with the temporary folder being written: tests stop a
	// child process there to check that a crash leaves no target behind.
	AfterStep func(step, tempDir string)
}

// importBatch is the default Options.BatchSize.
const importBatch = 2000

// importSteps are the steps of an import, in order, as AfterStep names
// them.
var importSteps = []string{"collections", "records", "links", "settings", "logs"}

// ErrTarget matches the error Import returns when the target dir cannot
// take an import (not empty, not a folder, an import into it running).
var ErrTarget = errors.New("pbimport: import target refused")

// targetError is why the target cannot take an import, in one line that
// names it.
type targetError struct{ msg string }

func (e *targetError) Error() string        { return e.msg }
func (e *targetError) Is(target error) bool { return target == ErrTarget }

func targetErr(format string, a ...any) error { return &targetError{fmt.Sprintf(format, a...)} }

// ClosingSource is a Source that holds files until it is closed: an open
// *pocketbase.Data, whose Close removes what it extracted from an archive.
type ClosingSource interface {
	Source
	Close() error
}

var _ ClosingSource = (*pocketbase.Data)(nil)

// importer is one run of Import.
type importer struct {
	ctx    context.Context
	open   func(tempDir string) (ClosingSource, error)
	src    Source
	opts   Options
	tmp    string
	st     *Stores
	report *Report
	// imported are the auth collections stored, by PocketBase id, with
	// the PocketBase fields whose values their records carry.
	imported map[string]*importedCollection
	order    []string // PocketBase ids of imported, in source order
	// logMaxDays and logMinLevel are settings.logs.maxDays and minLevel
	// as the settings step stored them.
	logMaxDays, logMinLevel int
}

// importedCollection is an auth collection the import stored.
type importedCollection struct {
	src    pocketbase.Collection
	col    *authn.Collection
	report *ImportedCollection
}

// Import converts what src reads from PocketBase v0.23 to v0.31 into a
// new strongbox data dir opts.Dir, and reports what it imported and what
// it skipped, and why (see Report). It writes through the stores
// opts.OpenStores opens (and a log store of its own) in a temporary
// folder beside Dir (.NAME.import-RANDOM), closes them (each fsyncs),
// fsyncs the folder and renames it onto Dir, then fsyncs Dir's parent: a crash before the rename leaves no Dir (or
// the empty one there was), never a half-imported one. It first removes
// the temporary folders an import into Dir that crashed left behind
// (Report.StaleRemoved), and on error removes its own.
func Import(ctx context.Context, src Source, opts Options) (*Report, error) {
	return ImportFrom(ctx, func(string) (ClosingSource, error) { return openSource{src}, nil }, opts)
}

// openSource is a source that is open already: Close does nothing.
type openSource struct{ Source }

func (openSource) Close() error { return nil }

// ImportFrom is Import with a source that open opens once the import's
// temporary folder exists and is locked: tempDir is that folder, where
// open extracts what it must (pocketbase.Options.TempDir, in a folder of
// its own there: an archive's databases, password hashes and secrets
// included). So a crash or a kill leaves them in the folder the next
// import into Dir removes, never in $TMPDIR. The import closes the source
// (which removes them) before it moves its folder onto Dir, and returns
// the error of open or Close as it is.
func ImportFrom(ctx context.Context, open func(tempDir string) (ClosingSource, error), opts Options) (*Report, error) {
	if opts.OpenStores == nil {
		return nil, errors.New("pbimport: no Options.OpenStores")
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = importBatch
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := checkImportTarget(dir); err != nil {
		return nil, err
	}
	im := &importer{ctx: ctx, open: open, opts: opts, report: &Report{DryRun: opts.DryRun}, imported: map[string]*importedCollection{}}
	parent, base := filepath.Split(dir)
	tmpParent := parent
	if !opts.DryRun {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", parent, err)
		}
	} else if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		tmpParent = "" // a dry run creates no folder: it converts in $TMPDIR
	}
	if tmpParent != "" {
		if im.report.StaleRemoved, err = removeStaleImports(parent, base); err != nil {
			return nil, err
		}
	}
	if im.tmp, err = os.MkdirTemp(tmpParent, "."+base+".import-"); err != nil {
		return nil, fmt.Errorf("create a temporary folder beside %s: %w", dir, err)
	}
	if err := im.run(); err != nil {
		return nil, errors.Join(err, os.RemoveAll(im.tmp))
	}
	if opts.DryRun {
		return im.report, os.RemoveAll(im.tmp)
	}
	if err := moveInto(im.tmp, dir); err != nil {
		return nil, errors.Join(err, os.RemoveAll(im.tmp))
	}
	return im.report, nil
}

// checkImportTarget refuses a target that exists and is not an empty
// folder.
func checkImportTarget(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		if fi, serr := os.Stat(dir); serr == nil && !fi.IsDir() {
			return targetErr("%s is not a folder", dir)
		}
		return err
	case len(entries) > 0:
		return targetErr("%s is not empty: an import never merges into existing data; give a new or empty --dir", dir)
	}
	return nil
}

// removeStaleImports removes the temporary folders of imports into
// parent/base that did not finish (a crash, a kill), and returns their
// names. One that is locked belongs to an import still running.
func removeStaleImports(parent, base string) ([]string, error) {
	stale, err := filepath.Glob(filepath.Join(parent, "."+base+".import-*"))
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, p := range stale {
		lock, err := journal.LockDir(p)
		if errors.Is(err, journal.ErrLocked) {
			return nil, targetErr("another import into %s is running (%s)", filepath.Join(parent, base), filepath.Base(p))
		}
		if err != nil {
			return nil, err
		}
		err = errors.Join(lock.Unlock(), os.RemoveAll(p))
		if err != nil {
			return nil, fmt.Errorf("remove the unfinished import %s: %w", p, err)
		}
		removed = append(removed, filepath.Base(p))
	}
	return removed, nil
}

// moveInto renames the finished import tmp onto dir (removing the empty
// folder dir first, if there is one), fsyncing the parent after.
func moveInto(tmp, dir string) error {
	if err := journal.SyncDir(tmp); err != nil {
		return err
	}
	if err := checkImportTarget(dir); err != nil {
		return err // something appeared meanwhile
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("replace the empty %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("move the import into %s: %w", dir, err)
	}
	return journal.SyncDir(filepath.Dir(dir))
}

// run imports into im.tmp, step by step, holding the folder's lock.
func (im *importer) run() (err error) {
	lock, err := journal.LockDir(im.tmp)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, lock.Unlock()) }()
	src, err := im.open(im.tmp)
	if err != nil {
		return err
	}
	im.src = src
	defer func() { err = errors.Join(err, src.Close()) }()
	if im.st, err = im.opts.OpenStores(im.tmp); err != nil {
		return err
	}
	defer func() {
		if im.st != nil {
			err = errors.Join(err, im.st.Close())
		}
	}()
	steps := []func() error{im.collections, im.records, im.links, im.settings, im.logs}
	for i, step := range steps {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
		if i == len(steps)-2 { // the auth and settings stores are complete
			err := im.st.Close()
			im.st = nil
			if err != nil {
				return err
			}
		}
		if im.opts.AfterStep != nil {
			im.opts.AfterStep(importSteps[i], im.tmp)
		}
	}
	// A PocketBase the lock check missed may have written while the
	// steps read: then what they read may mix two states.
	return im.src.Unchanged()
}

// skip records something the import left out, and why.
func (im *importer) skip(kind, name, reason string) {
	im.report.Skipped = append(im.report.Skipped, Skip{Kind: kind, Name: name, Reason: reason})
}

// trimSkip returns the reason of an authn.ImportSkip without the
// package's prefix.
func trimSkip(reason string) string {
	return strings.TrimPrefix(reason, authn.ErrImportSkipped.Error()+": ")
}
