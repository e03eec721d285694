// The strongbox command: main.go picks a command; each command lives in a
// file of its own (serve.go, superuser.go, conformancecmd.go, logscmd.go,
// backupcmd.go, restorecmd.go, importcmd.go); config.go holds the
// configuration they share and args.go the parsing of their arguments.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
)

// version is the strongbox version. It is set at link time only, with
// -ldflags "-X main.version=…", and never changed while the program runs.
var version = "0.1.0-dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c := cli{self: invocation(os.Args[0]), getenv: os.Getenv, stdout: os.Stdout, stderr: os.Stderr}
	if err := c.run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "strongbox:", err)
		os.Exit(1)
	}
}

// The usage line of each command; usage is all of them.
const (
	serveUsage       = "strongbox serve [--http 127.0.0.1:8090] [--dir ./sb_data] [--metrics ADDR]"
	superuserUsage   = "strongbox superuser upsert|create|update|delete|otp EMAIL [PASSWORD] [--dir ./sb_data]"
	conformanceUsage = "strongbox conformance [--url URL --email EMAIL --password PASSWORD] [--profile document|pocketbase|strongbox] [--run REGEXP] [--only ID-PREFIX] [--destructive] [--known NAME|FILE] [--record-known FILE] [--json FILE] [--junit FILE] [--timeout DURATION] [--smtp-host HOST] [--oauth2-host HOST]"
	logsUsage        = "strongbox logs seed [--n 1000000] [--dir ./sb_data]"
	backupUsage      = "strongbox backup list|create [NAME]|restore KEY [--dir ./sb_data]"
	restoreUsage     = "strongbox restore s3://BUCKET[/PREFIX] --endpoint URL [--region R] --dir NEW [--at \"YYYY-MM-DD HH:MM:SS.mmmZ\"] [--list] [--identity-file FILE]"
	importUsage      = "strongbox import pocketbase PATH [--dir ./sb_data] [--dry-run] [--no-mail] [--encryption-env NAME]"
	versionUsage     = "strongbox version"

	usage = "usage:\n  " + serveUsage + "\n  " + superuserUsage + "\n  " + conformanceUsage + "\n  " + logsUsage + "\n  " + backupUsage + "\n  " + restoreUsage + "\n  " + importUsage + "\n  " + versionUsage
)

// cli is what every command gets from the process: the environment, the
// outputs, and self, how the user started this program, for the commands
// it prints ("go run ." under go run).
type cli struct {
	self           string
	getenv         func(string) string
	stdout, stderr io.Writer
}

// run is the whole program as `strongbox` started it: main only wires the
// process to cli.run. Tests call it with their own arguments, environment
// and output.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	return cli{self: "strongbox", getenv: getenv, stdout: stdout, stderr: stderr}.run(ctx, args)
}

// run picks the command args[0] and runs it with the rest of args.
func (c cli) run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("no command\n" + c.named(usage))
	}
	switch args[0] {
	case "serve":
		return c.serve(ctx, args[1:], nil)
	case "superuser":
		return c.superuser(ctx, args[1:])
	case "conformance":
		return c.conformance(ctx, args[1:])
	case "logs":
		return c.logs(args[1:])
	case "backup":
		return c.backup(ctx, args[1:])
	case "restore":
		return c.restoreStream(ctx, args[1:])
	case "import":
		return c.importPocketBase(ctx, args[1:])
	case "version", "--version", "-v":
		if _, done, err := c.parseArgs(flag.NewFlagSet("version", flag.ContinueOnError), args[1:], versionUsage, 0, 0); done || err != nil {
			return err
		}
		fmt.Fprintln(c.stdout, "strongbox", version)
		return nil
	case "help", "--help", "-help", "-h":
		fmt.Fprintln(c.stdout, c.named(usage))
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], c.named(usage))
}

// named returns usage text with the program named as the user started it.
func (c cli) named(text string) string {
	return strings.ReplaceAll(text, "strongbox ", c.self+" ")
}

// invocation returns how the user started this program, from its argv[0]:
// go run builds the binary in a go-build folder, a temporary one
// (.../go-build123/b001/exe/NAME) or, since Go 1.24, the build cache
// (.../go-build/ab/HASH-d/NAME).
func invocation(arg0 string) string {
	if strings.Contains(filepath.ToSlash(arg0), "/go-build") {
		return "go run ."
	}
	if arg0 == "" {
		return "strongbox"
	}
	return arg0
}
