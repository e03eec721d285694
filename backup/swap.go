package backup

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// WorkDir is the work folder of a restore, inside the data dir (so on the
// same file system: every move is a rename). Archives and swaps leave it
// out, as they do backups/ and the lock file (see Excluded).
const WorkDir = ".sb_restore"

// The phases of a restore, as its state file records them. See Swap.
const (
	PhaseExtracting = "extracting" // new/ is being written; the live data is untouched
	PhaseMovingOut  = "moving-out" // live entries are moving into old/
	PhaseMovingIn   = "moving-in"  // new/ entries are moving into the data dir
	PhaseSwapped    = "swapped"    // the data dir holds the restored data; old/ the old one
)

// excluded are the entries of a data dir that a restore never moves and an
// archive never holds: the archives themselves, the dir lock (held by the
// process for the whole swap), the restore's work folder, and the folder
// fsck creates at the root of a mounted file system.
var excluded = []string{"backups", ".lock", WorkDir, "lost+found"}

// Excluded reports whether name, an entry at the root of a data dir, is
// left out of archives and of a restore's swap.
func Excluded(name string) bool { return slices.Contains(excluded, name) }

// ErrRestorePending is returned by Prepare when the work folder of an
// earlier restore is still there: Recover (and then Commit or Rollback)
// must deal with it first.
var ErrRestorePending = errors.New("backup: an earlier restore is not finished: recover it first")

// Recovery is what Recover found and did.
type Recovery struct {
	// Phase is the phase of the restore found in the data dir, or "" if
	// there was none (or it had not yet written its state).
	Phase string
	// Key is the archive that restore was restoring, if known.
	Key string
	// Pending is set when the data dir now holds restored data that is
	// not confirmed: the caller opens its stores on it, then calls Commit
	// if they open, or Rollback if they do not.
	Pending bool
}

// state is the content of <data dir>/.sb_restore/state.
type state struct {
	Phase string `json:"phase"`
	Key   string `json:"key"`
}

// swapper runs the swap protocol over one data dir. Every step that
// changes the disk goes through step first, so that tests can stop or fail
// the protocol at any of them.
type swapper struct {
	dir   string
	fault func(step string) error // nil in production
	// noSync (tests only) runs every sync step but not the fsync itself:
	// the fault tests stop the protocol at thousands of points, and what
	// they check is the order of the steps, not the disk's cache.
	noSync bool
}

func (s swapper) work() string      { return filepath.Join(s.dir, WorkDir) }
func (s swapper) newDir() string    { return filepath.Join(s.dir, WorkDir, "new") }
func (s swapper) oldDir() string    { return filepath.Join(s.dir, WorkDir, "old") }
func (s swapper) statePath() string { return filepath.Join(s.dir, WorkDir, "state") }
func (s swapper) step(name string) error {
	if s.fault != nil {
		if err := s.fault(name); err != nil {
			return fmt.Errorf("backup: restore: %s: %w", name, err)
		}
	}
	return nil
}

// do runs the step named name, failing it as the fault says. Its error
// names the step in terms of the data dir's entries, never a server path.
func (s swapper) do(name string, op func() error) error {
	if err := s.step(name); err != nil {
		return err
	}
	if err := op(); err != nil {
		return fmt.Errorf("backup: restore: %s: %w", name, unpath(err))
	}
	return nil
}

func (s swapper) mkdir(path string) error {
	return s.do("mkdir "+s.rel(path), func() error { return os.Mkdir(path, 0o700) })
}

func (s swapper) rename(from, to string) error {
	return s.do("rename "+s.rel(from)+" "+s.rel(to), func() error { return os.Rename(from, to) })
}

func (s swapper) sync(dir string) error {
	return s.do("sync "+s.rel(dir), func() error {
		if s.noSync {
			return nil
		}
		return syncPath(dir)
	})
}

func (s swapper) removeAll(path string) error {
	return s.do("remove "+s.rel(path), func() error { return os.RemoveAll(path) })
}

// rel names path relative to the data dir, for step names and errors.
func (s swapper) rel(path string) string {
	if r, err := filepath.Rel(s.dir, path); err == nil {
		return filepath.ToSlash(r)
	}
	return filepath.Base(path)
}

// writeState records st durably: a temporary file written and fsynced,
// renamed over the state file, and the work folder fsynced.
func (s swapper) writeState(st state) error {
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := s.statePath() + ".tmp"
	if err := s.step("write state " + st.Phase); err != nil {
		return err
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return unpath(err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = s.step("sync state " + st.Phase)
		if err == nil && !s.noSync {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return unpath(err)
	}
	if err := s.rename(tmp, s.statePath()); err != nil {
		return err
	}
	return s.sync(s.work())
}

// readState reads the state file; ok is false if there is none.
func (s swapper) readState() (st state, ok bool, err error) {
	b, err := os.ReadFile(s.statePath())
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, false, nil
	}
	if err != nil {
		return state{}, false, unpath(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		return state{}, false, fmt.Errorf("backup: restore: unreadable state file: %w", err)
	}
	switch st.Phase {
	case PhaseExtracting, PhaseMovingOut, PhaseMovingIn, PhaseSwapped:
		return st, true, nil
	}
	return state{}, false, fmt.Errorf("backup: restore: unknown phase %q in the state file", st.Phase)
}

// entries lists the names in dir that a swap moves.
func entries(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, unpath(err)
	}
	var names []string
	for _, de := range des {
		if !Excluded(de.Name()) {
			names = append(names, de.Name())
		}
	}
	return names, nil
}

// Prepare starts a restore of the archive key over the data dir: it
// creates the work folder and records the phase "extracting", and returns
// the folder, <data dir>/.sb_restore/new, which does not exist yet, into
// which the caller extracts the archive (Dir.Extract creates and fsyncs
// it). It refuses with ErrRestorePending if a work folder is already
// there: call Recover at start, before anything else.
func Prepare(dataDir, key string) (newDir string, err error) {
	return swapper{dir: dataDir}.prepare(key)
}

func (s swapper) prepare(key string) (string, error) {
	if _, err := os.Lstat(s.work()); err == nil {
		return "", ErrRestorePending
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", unpath(err)
	}
	if err := s.mkdir(s.work()); err != nil {
		return "", err
	}
	if err := s.sync(s.dir); err != nil {
		return "", err
	}
	if err := s.writeState(state{Phase: PhaseExtracting, Key: key}); err != nil {
		return "", err
	}
	return s.newDir(), nil
}

// Swap replaces the entries of the data dir with those of the work
// folder's new/, which Prepare started and the caller filled. Every store
// of the data dir must be closed, and the caller holds the dir lock. The
// data dir itself is never moved (it is often a mount point); only its
// entries are, by rename within one file system. Before each phase the
// state file <data dir>/.sb_restore/state is replaced durably (a temporary
// file written and fsynced, renamed over it, the folder fsynced):
//
//  1. extracting (Prepare): new/ is being written. A crash here leaves the
//     live data untouched; Recover deletes the work folder.
//  2. moving-out: every live entry (all but backups, .lock, .sb_restore
//     and lost+found) is renamed into old/, then the data dir and old/ are
//     fsynced. Recover undoes it: old/ entries go back.
//  3. moving-in: every new/ entry is renamed into the data dir, then both
//     are fsynced. Recover undoes it: the data dir's entries go back to
//     new/ (the state becomes moving-out again), then old/ ones come back.
//  4. swapped: the data dir holds the restored data, old/ the old one,
//     pending confirmation. Recover reports it Pending; the caller opens
//     the stores on it and calls Commit (which removes old/) if they open,
//     Rollback (which puts old/ back) if they do not.
//
// So after a crash at any point, Recover (then Commit or Rollback) leaves
// the data dir holding either all of the old data or all of the restored
// data, never a mix, and loses neither until the restored data has opened.
//
// If a step fails, Swap undoes what it did, as Recover would, and returns
// the error; if the undo fails too, the error says so and Recover at the
// next start finishes it.
func Swap(dataDir string) error {
	return swapper{dir: dataDir}.swap()
}

func (s swapper) swap() error {
	st, ok, err := s.readState()
	if err != nil {
		return err
	}
	if !ok || st.Phase != PhaseExtracting {
		return fmt.Errorf("backup: restore: swap in phase %q, want %q", st.Phase, PhaseExtracting)
	}
	if err := s.swapFrom(st); err != nil {
		if _, rerr := s.recover(); rerr != nil {
			return fmt.Errorf("%w; undoing it failed too, the next start will retry: %w", err, rerr)
		}
		return fmt.Errorf("%w (undone: the data dir holds the old data)", err)
	}
	return nil
}

func (s swapper) swapFrom(st state) error {
	if _, err := entries(s.newDir()); err != nil {
		return fmt.Errorf("backup: restore: the extracted data: %w", err)
	}
	if err := s.mkdir(s.oldDir()); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := s.sync(s.work()); err != nil {
		return err
	}
	st.Phase = PhaseMovingOut
	if err := s.writeState(st); err != nil {
		return err
	}
	live, err := entries(s.dir)
	if err != nil {
		return err
	}
	for _, name := range live {
		if err := s.rename(filepath.Join(s.dir, name), filepath.Join(s.oldDir(), name)); err != nil {
			return err
		}
	}
	if err := s.sync(s.dir); err != nil {
		return err
	}
	if err := s.sync(s.oldDir()); err != nil {
		return err
	}
	st.Phase = PhaseMovingIn
	if err := s.writeState(st); err != nil {
		return err
	}
	restored, err := entries(s.newDir())
	if err != nil {
		return err
	}
	for _, name := range restored {
		if err := s.rename(filepath.Join(s.newDir(), name), filepath.Join(s.dir, name)); err != nil {
			return err
		}
	}
	if err := s.sync(s.newDir()); err != nil {
		return err
	}
	if err := s.sync(s.dir); err != nil {
		return err
	}
	st.Phase = PhaseSwapped
	return s.writeState(st)
}

// Recover finishes or undoes a restore that a crash (or a failed step)
// interrupted. Call it at every start, before opening any store, with the
// dir lock held. With no work folder it does nothing. With no state file,
// or in phase extracting, it deletes the work folder: the live data was
// never touched. In phase moving-out or moving-in it puts the old data
// back completely and deletes the work folder. In phase swapped it changes
// nothing and reports Pending: see Swap.
func Recover(dataDir string) (Recovery, error) {
	return swapper{dir: dataDir}.recover()
}

func (s swapper) recover() (Recovery, error) {
	if _, err := os.Lstat(s.work()); errors.Is(err, fs.ErrNotExist) {
		return Recovery{}, nil
	} else if err != nil {
		return Recovery{}, unpath(err)
	}
	st, ok, err := s.readState()
	if err != nil {
		return Recovery{}, err
	}
	r := Recovery{Phase: st.Phase, Key: st.Key}
	switch {
	case !ok, st.Phase == PhaseExtracting:
		return r, s.removeWork()
	case st.Phase == PhaseSwapped:
		r.Pending = true
		return r, nil
	}
	return r, s.undo(st)
}

// removeWork deletes the work folder once it holds nothing to keep: the
// state file goes first (fsynced), so that a crash in the middle of the
// removal is again "no state".
func (s swapper) removeWork() error {
	if err := s.step("remove state"); err != nil {
		return err
	}
	if err := os.Remove(s.statePath()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return unpath(err)
	}
	if err := s.sync(s.work()); err != nil {
		return err
	}
	if err := s.removeAll(s.work()); err != nil {
		return err
	}
	return s.sync(s.dir)
}

// undo puts the old data back from phase moving-out or moving-in.
func (s swapper) undo(st state) error {
	if st.Phase == PhaseMovingIn || st.Phase == PhaseSwapped {
		// Every live entry is restored data (or was created by a store
		// opened on it): back into new/, which is discarded.
		if err := s.mkdir(s.newDir()); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		live, err := entries(s.dir)
		if err != nil {
			return err
		}
		for _, name := range live {
			to := filepath.Join(s.newDir(), name)
			if _, err := os.Lstat(to); err == nil {
				if err := s.removeAll(to); err != nil {
					return err
				}
			}
			if err := s.rename(filepath.Join(s.dir, name), to); err != nil {
				return err
			}
		}
		if err := s.sync(s.dir); err != nil {
			return err
		}
		if err := s.sync(s.newDir()); err != nil {
			return err
		}
		// Now the data dir holds none of the restored data and old/ all
		// of the old: the invariant of moving-out.
		st.Phase = PhaseMovingOut
		if err := s.writeState(st); err != nil {
			return err
		}
	}
	old, err := entries(s.oldDir())
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil // moving-out had not created old/ yet
	}
	if err != nil {
		return err
	}
	for _, name := range old {
		to := filepath.Join(s.dir, name)
		if _, err := os.Lstat(to); err == nil {
			return fmt.Errorf("backup: restore: cannot put %s back: the data dir has one already", name)
		}
		if err := s.rename(filepath.Join(s.oldDir(), name), to); err != nil {
			return err
		}
	}
	if err := s.sync(s.dir); err != nil {
		return err
	}
	return s.removeWork()
}

// Commit ends a restore whose restored data has opened (Recovery.Pending,
// or Swap returned nil): it deletes the old data. A crash during Commit
// leaves a work folder without a state, which Recover deletes.
func Commit(dataDir string) error {
	return swapper{dir: dataDir}.commit()
}

func (s swapper) commit() error {
	st, ok, err := s.readState()
	if err != nil {
		return err
	}
	if !ok || st.Phase != PhaseSwapped {
		return fmt.Errorf("backup: restore: commit in phase %q, want %q", st.Phase, PhaseSwapped)
	}
	return s.removeWork()
}

// Rollback ends a restore whose restored data did not open: it puts the
// old data back and deletes the restored data (the entries of the data dir
// besides backups/ and the lock, including any file a store created while
// trying to open the restored data). A crash during Rollback is finished
// by Recover.
func Rollback(dataDir string) error {
	return swapper{dir: dataDir}.rollback()
}

func (s swapper) rollback() error {
	st, ok, err := s.readState()
	if err != nil {
		return err
	}
	if !ok || st.Phase != PhaseSwapped {
		return fmt.Errorf("backup: restore: roll back in phase %q, want %q", st.Phase, PhaseSwapped)
	}
	return s.undo(st)
}
