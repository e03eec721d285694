package backup_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"strongbox/backup"
)

func ExampleValidName() {
	for _, name := range []string{"nightly_1.zip", "Nightly.zip", "../x.zip", "@auto_x.zip"} {
		fmt.Println(name, backup.ValidName(name))
	}
	// Output:
	// nightly_1.zip true
	// Nightly.zip false
	// ../x.zip false
	// @auto_x.zip false
}

func ExampleNewName() {
	now := time.Date(2026, 11, 23, 15, 30, 0, 0, time.UTC)
	taken := map[string]bool{"sb_backup_20261123153000.zip": true}
	fmt.Println(backup.NewName(now, func(name string) bool { return taken[name] }))
	// Output: sb_backup_20261123153000_2.zip
}

func ExampleDir_Create() {
	data, _ := os.MkdirTemp("", "strongbox")
	defer os.RemoveAll(data)
	dir, err := backup.OpenDir(filepath.Join(data, "backups"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dir.Close()
	// The caller captures its stores at one instant; here, one file
	// whose committed length is 5 bytes.
	src := backup.Source{{Name: "auth.journal", Size: 5, Open: func() (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("hello, and more appended later")), nil
	}}}
	created := time.Date(2026, 11, 23, 15, 30, 0, 0, time.UTC)
	if _, err := dir.Create(context.Background(), "nightly.zip", src, backup.Meta{Version: "0.1.0", Created: created}); err != nil {
		fmt.Println(err)
		return
	}
	m, err := dir.Verify("nightly.zip", backup.Limits{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Format, m.Strongbox, m.Created.Format(time.RFC3339))
	for _, f := range m.Files {
		fmt.Println(f.Name, f.Size, f.SHA256[:12])
	}
	list, _ := dir.List()
	fmt.Println(len(list), list[0].Key)
	// Output:
	// 1 0.1.0 2026-11-23T15:30:00Z
	// auth.journal 5 2cf24dba5fb0
	// 1 nightly.zip
}

func ExampleLock_TryLock() {
	var lock backup.Lock
	release, ok := lock.TryLock(backup.KindCreate, "nightly.zip")
	fmt.Println(ok)
	_, ok = lock.TryLock(backup.KindRestore, "other.zip")
	fmt.Println(ok, lock.Busy("nightly.zip"), lock.Busy("other.zip"))
	release()
	fmt.Println(lock.Busy("nightly.zip"))
	// Output:
	// true
	// false true false
	// false
}
