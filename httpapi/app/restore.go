package app

import (
	"context"
	"errors"
)

// errNoRestore is what CanRestore and Restore answer until restore is
// implemented.
var errNoRestore = errors.New("restore is not available yet")

// CanRestore reports whether this process can restore a backup.
func (b backups) CanRestore() error { return errNoRestore }

// Restore would replace the data dir's contents with the archive key and
// restart on it.
func (b backups) Restore(ctx context.Context, key string) error { return errNoRestore }
