package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"time"

	"strongbox/httpapi/app"
)

// backup runs `strongbox backup list|create|restore`, on the data dir of
// a stopped server (list works while one runs). Each needs a dir that
// holds data (app.RequireData): a mistyped --dir is refused, never
// created.
func (c cli) backup(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	cfg := baseConfig(fs, c.getenv)
	pos, done, err := c.parseArgs(fs, args, backupUsage, 1, 2)
	if done || err != nil {
		return err
	}
	if cfg.err != nil {
		return cfg.err
	}
	action, arg := pos[0], ""
	if len(pos) > 1 {
		arg = pos[1]
	}
	switch {
	case action != "list" && action != "create" && action != "restore":
		return c.usageErr(backupUsage, "unknown backup action %q (want list, create or restore)", action)
	case action == "list" && arg != "":
		return c.usageErr(backupUsage, "unexpected argument %q: list takes none", arg)
	case action == "restore" && arg == "":
		return c.usageErr(backupUsage, "restore needs the KEY of an archive (see strongbox backup list)")
	}
	if err := app.RequireData(cfg.Dir); err != nil {
		return err
	}
	switch action {
	case "list":
		list, err := app.ListBackups(ctx, cfg.Options)
		if err != nil {
			return err
		}
		for _, b := range list {
			fmt.Fprintf(c.stdout, "%s\t%d\t%s\n", b.Key, b.Size, b.Modified.UTC().Format(time.RFC3339))
		}
		return nil
	case "create":
		info, err := app.CreateBackup(ctx, cfg.Options, arg, version)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, info.Key)
		return nil
	}
	return c.restore(cfg.Options, arg)
}

// restore restores the archive key offline, on the data dir of a stopped
// server (see app.RestoreOffline), logging warnings and errors to stderr.
func (c cli) restore(opts app.Options, key string) error {
	opts.Logger = slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	start := time.Now()
	if err := app.RestoreOffline(opts, key); err != nil {
		return fmt.Errorf("restore %s: %w", key, err)
	}
	fmt.Fprintf(c.stdout, "Restored %s into %s in %s; the previous data is deleted.\n", key, opts.Dir, time.Since(start).Round(time.Millisecond))
	return nil
}
