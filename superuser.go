package main

import (
	"context"
	"flag"
	"fmt"

	"strongbox/authn"
	"strongbox/httpapi/app"
)

// superuser runs `strongbox superuser ACTION EMAIL [PASSWORD]` on a
// stopped server's data dir; the rules of each action are
// authn.ApplySuperuserAction's. upsert and create may start a new data
// dir; the other actions need one that holds data (app.RequireData).
func (c cli) superuser(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("superuser", flag.ContinueOnError)
	cfg := baseConfig(fs, c.getenv)
	pos, done, err := c.parseArgs(fs, args, superuserUsage, 2, 3)
	if done || err != nil {
		return err
	}
	action, email := pos[0], pos[1]
	password := ""
	if len(pos) > 2 {
		password = pos[2]
	}
	switch action {
	case authn.SuperuserUpsert, authn.SuperuserCreate, authn.SuperuserUpdate:
		if password == "" {
			return c.usageErr(superuserUsage, "missing password argument")
		}
	case authn.SuperuserDelete, authn.SuperuserOTPFor:
		if len(pos) > 2 {
			return c.usageErr(superuserUsage, "unexpected argument %q: %s takes no password", pos[2], action)
		}
	default:
		return c.usageErr(superuserUsage, "unknown superuser action %q (want upsert, create, update, delete or otp)", action)
	}
	if !authn.ValidEmail(email) {
		return fmt.Errorf("invalid email address %q", email)
	}
	if cfg.err != nil {
		return cfg.err
	}
	if action != authn.SuperuserUpsert && action != authn.SuperuserCreate {
		if err := app.RequireData(cfg.Dir); err != nil {
			return err
		}
	}
	st, err := app.Open(cfg.Options, false)
	if err != nil {
		return err
	}
	defer st.Close()
	msg, err := st.Auth.ApplySuperuserAction(ctx, action, email, password)
	if err != nil {
		return err
	}
	fmt.Fprint(c.stdout, msg)
	return st.Close()
}
