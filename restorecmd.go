package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"strongbox/backup"
	"strongbox/backup/age"
	"strongbox/backup/s3"
	"strongbox/backup/stream"
)

// restoreStream runs `strongbox restore s3://BUCKET[/PREFIX] …`: it
// rebuilds a data dir from the continuous backup in a bucket (package
// backup/stream), or lists its restore points. Credentials come from
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, the region and endpoint
// from the flags or AWS_REGION and AWS_ENDPOINT_URL, the age identity from
// --identity-file or STRONGBOX_AGE_IDENTITY.
func (c cli) restoreStream(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("restore", flag.ContinueOnError)
	endpoint := fs.String("endpoint", c.getenv("AWS_ENDPOINT_URL"), "URL of the S3 service (env AWS_ENDPOINT_URL)")
	region := fs.String("region", envOr(c.getenv, "AWS_REGION", "us-east-1"), "region of the bucket (env AWS_REGION)")
	dir := fs.String("dir", "", "the data dir to create: new or empty")
	at := fs.String("at", "", `the instant to restore, "YYYY-MM-DD HH:MM:SS.mmmZ" (UTC); default the latest`)
	list := fs.Bool("list", false, "print the restorable range and restore nothing")
	idFile := fs.String("identity-file", "", "age identity file of an encrypted stream (env STRONGBOX_AGE_IDENTITY: the identity itself)")
	pathStyle := fs.Bool("path-style", true, "address the bucket as the first path segment (most self-hosted servers want it)")
	pos, done, err := c.parseArgs(fs, args, restoreUsage, 1, 1)
	if done || err != nil {
		return err
	}
	bucket, prefix, err := parseS3URL(pos[0])
	if err != nil {
		return c.usageErr(restoreUsage, "%v", err)
	}
	opts := stream.RestoreOptions{Prefix: prefix}
	if *at != "" {
		if opts.At, err = parseInstant(*at); err != nil {
			return c.usageErr(restoreUsage, "%v", err)
		}
	}
	if !*list && *dir == "" {
		return c.usageErr(restoreUsage, "--dir is required: the data dir to create")
	}
	if opts.Open, err = c.identity(*idFile); err != nil {
		return err
	}
	cl, err := s3.New(s3.Config{
		Endpoint: *endpoint, Region: *region, Bucket: bucket, ForcePathStyle: *pathStyle,
		AccessKey: c.getenv("AWS_ACCESS_KEY_ID"), Secret: c.getenv("AWS_SECRET_ACCESS_KEY"),
	})
	if err != nil {
		return err
	}
	opts.Bucket = cl
	if *list {
		return c.listStream(ctx, opts)
	}
	start := time.Now()
	res, err := stream.Restore(ctx, opts, *dir)
	if err != nil {
		return err
	}
	if res.Damage != "" {
		fmt.Fprintf(c.stderr, "warning: restored the last consistent state, not the latest: %s\n", res.Damage)
	}
	if !res.Exact {
		fmt.Fprintln(c.stderr, "warning: the stream's commit times are merged around --at: writes committed shortly before it may be missing")
	}
	fmt.Fprintf(c.stdout, "Restored the state at %s (generation %s, %d objects, %d bytes) into %s in %s. Start it with: %s serve --dir %s\n",
		res.Point.UTC().Format(stream.TimeLayout), res.Generation, res.Objects, res.Bytes, *dir,
		time.Since(start).Round(time.Millisecond), c.self, *dir)
	return nil
}

// listStream prints the restore points of the stream, one generation a line.
func (c cli) listStream(ctx context.Context, opts stream.RestoreOptions) error {
	spans, err := stream.List(ctx, opts)
	if err != nil {
		return err
	}
	for _, sp := range spans {
		fmt.Fprintf(c.stdout, "%s\t%s\t%s\t%d objects\n", sp.Generation,
			sp.From.UTC().Format(stream.TimeLayout), sp.To.UTC().Format(stream.TimeLayout), sp.Objects)
	}
	last := spans[len(spans)-1]
	fmt.Fprintf(c.stdout, "restorable from %s to %s\n", spans[0].From.UTC().Format(stream.TimeLayout), last.To.UTC().Format(stream.TimeLayout))
	return nil
}

// identity returns the decryption of the stream's objects with the age
// identity of --identity-file (an age-keygen file: comments and blank
// lines skipped) or STRONGBOX_AGE_IDENTITY. Without one, plain objects
// are read as they are and an encrypted one is refused saying what to
// give.
func (c cli) identity(file string) (func(io.Reader) (io.Reader, error), error) {
	text, from := c.getenv("STRONGBOX_AGE_IDENTITY"), "STRONGBOX_AGE_IDENTITY"
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("--identity-file: %w", err)
		}
		text, from = string(b), "--identity-file"
	}
	var keys backup.Keys
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		id, err := age.ParseX25519Identity(line)
		if err != nil {
			return nil, fmt.Errorf("%s: not an age identity (AGE-SECRET-KEY-1…)", from) // never the key itself
		}
		keys.Identities = append(keys.Identities, id)
	}
	if text != "" && len(keys.Identities) == 0 {
		return nil, fmt.Errorf("%s: holds no age identity", from)
	}
	return keys.Opener(), nil
}

// parseS3URL splits s3://BUCKET[/PREFIX] into the bucket and the prefix
// of the stream's keys: PREFIX/stream/, or stream/ without PREFIX.
func parseS3URL(u string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(u, "s3://")
	if !ok {
		return "", "", fmt.Errorf("%q is not an s3://BUCKET[/PREFIX] URL", u)
	}
	bucket, p, _ := strings.Cut(rest, "/")
	if err := s3.ValidBucket(bucket); err != nil {
		return "", "", fmt.Errorf("%q: %v", u, err)
	}
	if p = strings.Trim(p, "/"); p != "" {
		return bucket, p + "/" + stream.DefaultPrefix, nil
	}
	return bucket, stream.DefaultPrefix, nil
}

// parseInstant reads a restore point: the PocketBase date format
// (stream.TimeLayout) or RFC 3339.
func parseInstant(s string) (time.Time, error) {
	for _, layout := range []string{stream.TimeLayout, "2006-01-02 15:04:05Z", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--at %q: want \"YYYY-MM-DD HH:MM:SS.mmmZ\" (UTC)", s)
}
