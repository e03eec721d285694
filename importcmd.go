package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"strongbox/backup/pbimport"
	"strongbox/backup/pocketbase"
	"strongbox/httpapi/app"
)

// pocketBaseSource is an open PocketBase data dir or archive.
type pocketBaseSource = pbimport.ClosingSource

// openPocketBase opens what `import pocketbase` reads; tests replace it
// with a source built in memory.
var openPocketBase = func(path string, opts pocketbase.Options) (pocketBaseSource, error) {
	return pocketbase.Open(path, opts)
}

// importPocketBase runs `strongbox import pocketbase PATH`: it converts a
// PocketBase v0.23 to v0.31 data dir (pb_data of a stopped PocketBase) or
// backup archive into a new data dir (pbimport.ImportFrom, writing the
// stores app.ImportStores opens) and prints
// what it imported and skipped.
func (c cli) importPocketBase(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	cfg := baseConfig(fs, c.getenv)
	dryRun := fs.Bool("dry-run", false, "print the report without writing anything: the conversion runs in a temporary folder that is removed, and the logs are counted, not written")
	noMail := fs.Bool("no-mail", false, "turn the imported SMTP settings off if they are enabled: mails go to the outbox (mail/ in the data dir) until SMTP is turned on again")
	encEnv := fs.String("encryption-env", "", "the environment variable that holds the key of PocketBase's encrypted settings (PocketBase's --encryptionEnv)")
	pos, done, err := c.parseArgs(fs, args, importUsage, 2, 2)
	if done || err != nil {
		return err
	}
	if pos[0] != "pocketbase" {
		return c.usageErr(importUsage, "unknown import source %q (want pocketbase)", pos[0])
	}
	if cfg.err != nil {
		return cfg.err
	}
	path := pos[1]
	var opts pocketbase.Options
	if *encEnv != "" {
		if opts.EncryptionKey = c.getenv(*encEnv); opts.EncryptionKey == "" {
			return fmt.Errorf("--encryption-env %s: the variable is empty or not set; set it to PocketBase's encryption key", *encEnv)
		}
	}
	start := time.Now()
	// An archive is extracted into the import's temporary folder, which
	// the next import removes should this one be killed.
	open := func(tempDir string) (pocketBaseSource, error) {
		opts.TempDir = tempDir
		return openPocketBase(path, opts)
	}
	rep, err := pbimport.ImportFrom(ctx, open, pbimport.Options{OpenStores: app.ImportStores, Dir: cfg.Dir, DryRun: *dryRun, NoMail: *noMail, LogsMaxBytes: cfg.LogsMaxBytes})
	if err != nil {
		return importErr(path, err)
	}
	if *dryRun {
		fmt.Fprintf(c.stdout, "Dry run: %s read in %s; nothing written to %s.\n", path, time.Since(start).Round(time.Millisecond), cfg.Dir)
	} else {
		fmt.Fprintf(c.stdout, "Imported %s into %s in %s.\n", path, cfg.Dir, time.Since(start).Round(time.Millisecond))
	}
	fmt.Fprint(c.stdout, rep.Text())
	if *dryRun {
		fmt.Fprintf(c.stdout, "next: run the import again without --dry-run\n")
	} else {
		fmt.Fprintf(c.stdout, "next: strongbox serve --dir %s\n", shellWord(cfg.Dir))
	}
	return nil
}

// shellWord is s as one word of a POSIX shell: as it is when it is made
// of safe characters only, else in single quotes.
func shellWord(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-./:=@+,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// importErr is the one line an import failure prints: what went wrong
// with path (package pocketbase's errors say what to do, such as
// --encryption-env for encrypted settings), or the target's refusal.
func importErr(path string, err error) error {
	switch {
	case errors.Is(err, pbimport.ErrTarget):
		return err
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("import %s: interrupted; nothing was written", path)
	}
	return fmt.Errorf("import %s: %w", path, err)
}
