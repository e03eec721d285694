// Package backup keeps the archives of the data directory: it writes,
// stores (uploads), lists, deletes, verifies and extracts the zip files in
// <data dir>/backups/ or in an S3 bucket, and nothing else.
//
// It imports no store and knows nothing of HTTP. A caller that wants a
// backup captures the stores itself and hands Create a [Source]: a list of
// files, each with the length that was committed at one instant and a way
// to open it (see [Source] for that contract). httpapi/api renders the errors
// of this package as PocketBase messages; the mapping is documented on
// [Lock] and on the sentinel errors.
//
// # Keys
//
// An archive's key is its file name in the backups folder. A client names
// the archives it creates or uploads with a [ValidName] (PocketBase's rule);
// the auto-backup schedule names its own [AutoPrefix] + a ValidName
// ([NewAutoName]), which no client can choose, so that pruning the oldest
// automatic backups never touches a manual or uploaded one. [ValidKey]
// accepts both: List shows them, and Create, Stat, Open, Delete, Verify and
// Extract take them; Put takes a ValidName only.
//
// # Archive format
//
// An archive is a zip file whose entries are the files of the source,
// deflated, plus one entry named manifest.json:
//
//	{"format":1,"strongbox":"0.1.0","created":"2026-11-23T15:23:09Z",
//	 "files":[{"name":"auth.journal","size":1234,"sha256":"…"}]}
//
// Names are slash-separated paths relative to the data directory: the
// server archives its store files (auth.journal, settings.journal,
// logs/<segment>), never backups/, the lock file or anything else in the
// data dir, and the manifest records each file's size and SHA-256, the
// strongbox version and the instant captured. [Verify]
// accepts an archive only if the manifest is present and of a known format,
// every entry is a regular file (or a directory) with a clean local name,
// the entries are exactly the files the manifest lists, every size and
// SHA-256 matches, and the bytes actually decompressed stay under the
// given [Limits]. The central directory is bounded by MaxFiles before
// archive/zip parses it, since the parser keeps every record in memory.
// Then [Limits].Check, if set, checks that the files make a data dir the
// server can open: the server's check (package strongbox/httpapi/app,
// "Backups") opens the stores on scratch copies. Upload and restore both
// verify in full before they keep or restore an archive, so an archive
// whose files are damaged under a manifest that matches the damage, or
// whose manifest lists no files, is refused naming the entry; the reasons
// name entries of the archive, never a path on the server.
//
// # Durability
//
// Create streams the archive into a temporary file in the backups folder
// (named ".tmp-…", which the name rule never matches, so List never shows
// it), fsyncs it, links it into place under its key (refusing an existing
// key, never overwriting), removes the temporary name and fsyncs the
// folder. [Dir.Put] stores an upload the same way, after verifying it. A
// failed or cancelled create or upload removes its temporary file; a
// temporary file left by a crash is removed by [Dir.CleanTemp], which the
// server calls at start.
//
// # Storage
//
// The callers use a [Storage], never a [Dir] directly: [Dir.Storage] is
// the folder, [NewS3Storage] a bucket reached through an [ObjectStore]
// (the S3 client itself, or a fake bucket in tests). On a bucket, Create
// streams the zip writer into a multipart upload (nothing on disk, the
// object visible only once complete); Put receives and verifies an upload in a
// temporary file of the folder before uploading it, so a refused upload
// never reaches the bucket; Open reads by ranged GETs, for downloads with
// Range; and Fetch downloads an archive into a temporary file of the
// folder, which a restore verifies and extracts as it would a local one
// ([Archive]). Keys are the same valid keys ([ValidKey]), each an object at the
// bucket's root, as PocketBase keeps its backups, so no key reaches
// another object: only keys that are valid archive names are listed, read
// or deleted, and no "/", ".." or other prefix reaches other objects of
// the bucket.
//
// On a bucket, a create checks that its name is free with a HEAD and
// aborts the multipart upload on any failure, so the bucket never holds a
// partial archive; the temporary files of an upload or a fetch are on the
// data dir's disk (never whole in memory), and one left by a crash is
// removed by [Dir.CleanTemp] at the next start. Every call to the bucket
// is bounded (package strongbox/backup/s3, "Bounds").
//
// # Encryption
//
// A storage given [Keys] ([WithKeys]; the server's come from the settings
// backups.encryption) writes every archive it creates, and every plain
// upload it stores, as an age v1 file (package strongbox/backup/age)
// encrypted to the keys' recipients, streamed: neither the folder nor the
// bucket ever holds the plaintext, not even in a temporary file, and the
// key stays name.zip. What it fetches or receives is opened with the
// keys' identities when it starts with the age intro, and read as a zip
// file when not; Verify and Extract then read the plaintext at random
// offsets through [age.ReaderAt], each 64 KiB chunk authenticated before
// use. An encrypted archive the identities cannot open, or a damaged one,
// is an [*ArchiveError] saying so, before a restore changes anything.
// Downloads ([Storage.Open]) serve the stored bytes; `age -d -i key.txt
// name.zip > plain.zip` decrypts one by hand.
//
// # Restore
//
// A restore replaces the entries of the data dir (never the dir itself,
// which is often a mount point) with an archive's files, in a work folder
// inside the data dir, .sb_restore, so that every move is a rename on one
// file system. [Prepare] starts it, the caller extracts into the folder
// Prepare names, [Swap] moves the live entries out and the restored ones
// in, recording each phase durably first, and [Recover], run at every
// start before any store opens, undoes a swap that a crash interrupted or
// reports one pending confirmation, which the caller ends with [Commit]
// once the stores open on it or [Rollback] if they do not. Swap documents
// the protocol. backups/, the lock file, .sb_restore and lost+found are
// never moved and never archived ([Excluded]).
package backup
