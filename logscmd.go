package main

import (
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"time"

	"strongbox/httpapi/app"
	"strongbox/logstore"
)

// logs runs `strongbox logs seed`, which adds synthetic request logs to a
// stopped server's data dir, a new one included (seed, then serve).
func (c cli) logs(args []string) error {
	fs := flag.NewFlagSet("logs seed", flag.ContinueOnError)
	cfg := baseConfig(fs, c.getenv)
	n := fs.Int("n", 1000000, "number of synthetic request logs to add")
	pos, done, err := c.parseArgs(fs, args, logsUsage, 1, 1)
	if done || err != nil {
		return err
	}
	if pos[0] != "seed" {
		return c.usageErr(logsUsage, "unknown logs action %q", pos[0])
	}
	if *n < 0 {
		return errors.New("--n must not be negative")
	}
	if cfg.err != nil {
		return cfg.err
	}
	lock, err := app.LockDir(cfg.Dir)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	start := time.Now()
	// The size cap applies as it will when the server opens the store
	// (STRONGBOX_LOGS_MAX_MB): seeding past the default cap needs it raised.
	if err := logstore.Seed(filepath.Join(cfg.Dir, "logs"), *n, logstore.Options{MaxBytes: cfg.LogsMaxBytes}); err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "Added %d synthetic request logs to %s in %s.\n", *n, filepath.Join(cfg.Dir, "logs"), time.Since(start).Round(time.Millisecond))
	return nil
}
