package backup

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The data dir before a restore, and the data the archive holds.
var (
	oldData = map[string]string{
		"auth.journal":      "old auth",
		"settings.journal":  "old settings",
		"logs/00000001.seg": "old segment 1",
		"logs/00000002.seg": "old segment 2",
		"old-only.txt":      "only in the old data",
	}
	newData = map[string]string{
		"auth.journal":      "new auth",
		"settings.journal":  "new settings",
		"logs/00000001.seg": "new segment 1",
		"deep/er/file":      "only in the new data",
	}
	// kept are the excluded entries, which every outcome leaves as they are.
	kept = map[string]string{
		"backups/a.zip": "an archive",
		".lock":         "",
	}
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// readTree returns every file under root by slash path, and every folder
// as "path/" with an empty value, leaving out root/WorkDir.
func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
			return nil
		case rel == WorkDir:
			return filepath.SkipDir
		case d.IsDir():
			got[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// withDirs adds the folders of files (as readTree lists them) and kept.
func withDirs(files map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{files, kept} {
		for name, data := range m {
			out[name] = data
			for d := filepath.ToSlash(filepath.Dir(name)); d != "."; d = filepath.ToSlash(filepath.Dir(d)) {
				out[d+"/"] = ""
			}
		}
	}
	return out
}

var errCrash = errors.New("injected fault")

// faults counts the steps of the protocol and fails some of them: every
// step from crashAt on (the process stopped there: nothing after it
// happens, not even an undo), or only the step failAt (a step failed and
// the protocol went on to undo it). -1 disables either.
type faults struct {
	n, crashAt, failAt int
	steps              []string
}

func (f *faults) fault(step string) error {
	i := f.n
	f.n++
	f.steps = append(f.steps, step)
	if (f.crashAt >= 0 && i >= f.crashAt) || i == f.failAt {
		return errCrash
	}
	return nil
}

func never() *faults { return &faults{crashAt: -1, failAt: -1} }

// restore runs Prepare, the extraction (written by hand) and Swap with
// the faults of f. It reports whether Swap returned nil.
func restore(t *testing.T, dir string, f *faults) bool {
	t.Helper()
	s := swapper{dir: dir, fault: f.fault, noSync: true}
	newDir, err := s.prepare("a.zip")
	if err != nil {
		return false
	}
	writeTree(t, newDir, newData)
	return s.swap() == nil
}

func setup(t *testing.T) string {
	t.Helper()
	dir := t.TempDir() // in memory: TestMain
	writeTree(t, dir, oldData)
	writeTree(t, dir, kept)
	return dir
}

// finish runs Recover and, if a restore is pending, Commit (or Rollback)
// with the faults of f, then Recover and the same choice without faults,
// as the next start would. It reports whether it found the restored data
// pending confirmation and chose to commit it: then the data dir must
// hold the restored data, else the old data.
func finish(t *testing.T, dir string, f *faults, commit bool) (committed bool) {
	t.Helper()
	s := swapper{dir: dir, fault: f.fault, noSync: true}
	pending := false
	if r, err := s.recover(); err == nil && r.Pending {
		pending = true
		if commit {
			s.commit()
		} else {
			s.rollback()
		}
	}
	r, err := Recover(dir)
	if err != nil {
		t.Fatalf("Recover after the faults: %v", err)
	}
	if r.Pending {
		pending = true
		if commit {
			if err := Commit(dir); err != nil {
				t.Fatalf("Commit: %v", err)
			}
		} else if err := Rollback(dir); err != nil {
			t.Fatalf("Rollback: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, WorkDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("work folder still there after the restore ended (%v)", err)
	}
	return pending && commit
}

func TestSwapWithoutFaults(t *testing.T) {
	for _, commit := range []bool{true, false} {
		dir := setup(t)
		if !restore(t, dir, never()) {
			t.Fatal("Swap failed without faults")
		}
		if got, want := readTree(t, dir), withDirs(newData); !cmp.Equal(got, want) {
			t.Fatalf("after Swap, the data dir differs from the restored data (-got +want):\n%s", cmp.Diff(got, want))
		}
		r, err := Recover(dir)
		if err != nil || !r.Pending || r.Key != "a.zip" || r.Phase != PhaseSwapped {
			t.Fatalf("Recover after Swap = %+v, %v; want pending a.zip in phase swapped", r, err)
		}
		finish(t, dir, never(), commit)
		want := withDirs(oldData)
		if commit {
			want = withDirs(newData)
		}
		if got := readTree(t, dir); !cmp.Equal(got, want) {
			t.Fatalf("commit=%v: data dir (-got +want):\n%s", commit, cmp.Diff(got, want))
		}
	}
}

// TestSwapFaults stops (or fails) the restore at every step of Prepare and
// Swap, then at every step of the Recover, Commit or Rollback that
// follows, and checks that the data dir ends exactly as the old data or
// exactly as the restored data, and that it is the restored data only when
// the restore was confirmed.
func TestSwapFaults(t *testing.T) {
	counted := never()
	restore(t, setup(t), counted)
	swapSteps := counted.steps
	if len(swapSteps) < 20 {
		t.Fatalf("only %d steps counted: %q", len(swapSteps), swapSteps)
	}
	for _, mode := range []string{"crash", "fail"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testSwapFaults(t, mode, swapSteps)
		})
	}
	t.Run("finish", func(t *testing.T) {
		t.Parallel()
		testFinishFaults(t)
	})
}

func testSwapFaults(t *testing.T, mode string, swapSteps []string) {
	for k := range swapSteps {
		t.Run(strconv.Itoa(k), func(t *testing.T) {
			t.Parallel()
			testSwapFaultAt(t, mode, swapSteps, k)
		})
	}
}

// testSwapFaultAt stops (or fails) the swap at its step k, then finishes
// the restore as the next start would, itself stopped at each of its steps.
func testSwapFaultAt(t *testing.T, mode string, swapSteps []string, k int) {
	for _, commit := range []bool{true, false} {
		// Count the steps of the finish after this fault, then
		// stop it at each of them too (and not at all: j = -1).
		dir := setup(t)
		restore(t, dir, at(mode, k))
		counted := never()
		finish(t, dir, counted, commit)
		last := counted.n
		if mode == "fail" {
			last = 0 // the crash mode covers the finish's steps
		}
		for j := -1; j < last; j++ {
			name := mode + " at " + swapSteps[k]
			dir := setup(t)
			swapped := restore(t, dir, at(mode, k))
			f := never()
			if j >= 0 {
				f = at("crash", j)
				name += ", then crash at finish step " + counted.steps[j]
			}
			confirmed := finish(t, dir, f, commit)
			if swapped {
				t.Errorf("%s: Swap returned nil", name)
			}
			want := withDirs(oldData)
			if confirmed {
				want = withDirs(newData)
			}
			if got := readTree(t, dir); !cmp.Equal(got, want) {
				t.Fatalf("%s (commit=%v, confirmed=%v): data dir is neither all old nor all new as it should be (-got +want):\n%s",
					name, commit, confirmed, cmp.Diff(got, want))
			}
		}
	}
}

// testFinishFaults stops the Commit or Rollback after a Swap that
// succeeded at each step.
func testFinishFaults(t *testing.T) {
	for _, commit := range []bool{true, false} {
		dir := setup(t)
		restore(t, dir, never())
		counted := never()
		finish(t, dir, counted, commit)
		for j := range counted.n {
			dir := setup(t)
			if !restore(t, dir, never()) {
				t.Fatal("Swap failed without faults")
			}
			confirmed := finish(t, dir, at("crash", j), commit)
			if confirmed != commit {
				t.Errorf("commit=%v, crash at %s: confirmed = %v", commit, counted.steps[j], confirmed)
			}
			want := withDirs(oldData)
			if commit {
				want = withDirs(newData)
			}
			if got := readTree(t, dir); !cmp.Equal(got, want) {
				t.Fatalf("commit=%v, crash at %s: data dir (-got +want):\n%s", commit, counted.steps[j], cmp.Diff(got, want))
			}
		}
	}
}

func at(mode string, k int) *faults {
	if mode == "crash" {
		return &faults{crashAt: k, failAt: -1}
	}
	return &faults{crashAt: -1, failAt: k}
}

func TestSwapSteps(t *testing.T) {
	// Every phase is recorded before its moves, and each move and state
	// change is fsynced before the next phase.
	f := never()
	restore(t, setup(t), f)
	all := strings.Join(f.steps, "\n")
	for _, want := range []string{
		"write state extracting", "write state moving-out", "rename auth.journal .sb_restore/old/auth.journal",
		"write state moving-in", "rename .sb_restore/new/auth.journal auth.journal", "write state swapped",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("steps lack %q:\n%s", want, all)
		}
	}
	if i, j := strings.Index(all, "write state moving-in"), strings.Index(all, "rename .sb_restore/new/"); i < 0 || j < i {
		t.Errorf("moving in before the state says so:\n%s", all)
	}
	for _, name := range []string{"backups", ".lock"} {
		if strings.Contains(all, "rename "+name) {
			t.Errorf("the swap moved %s:\n%s", name, all)
		}
	}
}

func TestPrepareRefusesPending(t *testing.T) {
	dir := setup(t)
	if !restore(t, dir, never()) {
		t.Fatal("Swap failed")
	}
	if _, err := Prepare(dir, "b.zip"); !errors.Is(err, ErrRestorePending) {
		t.Fatalf("Prepare over a pending restore = %v, want ErrRestorePending", err)
	}
	if err := Commit(dir); err != nil {
		t.Fatal(err)
	}
	if err := Rollback(dir); err == nil {
		t.Fatal("Rollback with no restore pending succeeded")
	}
	if r, err := Recover(dir); err != nil || r != (Recovery{}) {
		t.Fatalf("Recover with nothing to do = %+v, %v", r, err)
	}
}
