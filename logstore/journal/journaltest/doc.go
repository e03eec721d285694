// Package journaltest provides a journal.FS for tests: the real file system
// with a settable amount of free space and injectable I/O errors, so that
// tests of the stores can fill the disk, break it and free it again without
// root or a special file system.
package journaltest
