package backup

import "sync"

// Kind is the kind of operation that holds the [Lock].
type Kind int

const (
	// KindCreate is a backup being created (POST /api/backups, or the
	// auto-backup schedule).
	KindCreate Kind = iota + 1
	// KindRestore is a backup being restored.
	KindRestore
)

// String names the kind: "create", "restore", or "none".
func (k Kind) String() string {
	switch k {
	case KindCreate:
		return "create"
	case KindRestore:
		return "restore"
	}
	return "none"
}

// Lock allows one create or restore at a time (interface §3 rules 1-2), as
// PocketBase's @activeBackup does. It lives in memory
// only; a second process on the same data dir is kept out by the data dir's
// lock file. The zero Lock is free.
//
// How httpapi/api renders it, operation by operation:
//
//   - list, download and upload neither check nor take the lock.
//   - create (API) and restore (API): TryLock; when it fails, 400 "Try
//     again later - another backup/restore process has already been
//     started." Create holds the lock for the whole synchronous run, keyed
//     by the archive's key, generated or given (PocketBase keys an
//     auto-named create by "", so its archive can be deleted while it is
//     written). Restore holds it from its checks until the process restarts.
//   - delete: if Busy(key), 400 "The backup is currently being used and
//     cannot be deleted."; else, while any operation runs, the "Try again
//     later" 400 of §7 (PocketBase lets other keys go).
//   - auto backups: TryLock as create; a failure is logged.
//   - /api/health reports canBackup as !Held().
type Lock struct {
	mu   sync.Mutex
	held bool
	kind Kind
	key  string
}

// TryLock takes the lock for an operation of kind on key, if it is free.
// The release function frees it; calling it more than once is harmless.
func (l *Lock) TryLock(kind Kind, key string) (release func(), ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return nil, false
	}
	l.held, l.kind, l.key = true, kind, key
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.held, l.kind, l.key = false, 0, ""
			l.mu.Unlock()
		})
	}, true
}

// Busy reports whether key is the archive the running operation creates or
// restores, which must not be deleted. The empty key is never busy.
func (l *Lock) Busy(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held && key != "" && l.key == key
}

// Held reports the running operation, if any.
func (l *Lock) Held() (kind Kind, key string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.kind, l.key, l.held
}
