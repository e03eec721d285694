package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseArgs parses a command's flags, which may come before, between or
// after its positional arguments, and returns the positional arguments:
// at least min and at most max of them (max < 0: any number). On --help or
// -h it prints the command's usage and flags to stdout and reports done, so
// that the command returns nil (exit 0). A bad flag or a wrong number of
// arguments is an error that carries the usage.
func (c cli) parseArgs(fs *flag.FlagSet, args []string, cmdUsage string, min, max int) (pos []string, done bool, err error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(c.stdout, "usage: %s\n", c.named(cmdUsage))
				fs.SetOutput(c.stdout)
				fs.PrintDefaults()
				return nil, true, nil
			}
			return nil, false, c.usageErr(cmdUsage, "%v", err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	switch {
	case max >= 0 && len(pos) > max:
		return nil, false, c.usageErr(cmdUsage, "unexpected argument %q", pos[max])
	case len(pos) < min:
		return nil, false, c.usageErr(cmdUsage, "missing arguments")
	}
	return pos, false, nil
}

// usageErr is an error that ends with the usage of a command.
func (c cli) usageErr(cmdUsage, format string, a ...any) error {
	return fmt.Errorf(format+"\nusage: %s", append(a, c.named(cmdUsage))...)
}
