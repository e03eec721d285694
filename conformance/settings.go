package conformance

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
)

// Settings are one of the areas §1 says exist but whose contract is "not
// shown"; issue 4 asks for PocketBase-shaped GET and PATCH /api/settings
// (superuser only). These checks never leave the settings changed: the one
// PATCH they send must be refused, and a cleanup puts back what was read
// if the server applied it anyway.

const (
	msgSettingsSave = "An error occurred while saving the new settings."
	// msgCollUpdate is PocketBase's message for a collection PATCH that
	// fails validation.
	msgCollUpdate = "Failed to update collection."

	// msgLoggingOff is the reason given by the checks that need request
	// logs on a server that does not keep them.
	msgLoggingOff = "request logging is off on this server (logs.maxDays 0)"
)

const sectionSettings = "§1 (settings: contract not shown); §7 rows 6 and 8; PocketBase v0.31.0 (its settings document, superusers only)"

var settingsRequirements = []*Requirement{
	{
		ID:      "SETTINGS-001",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "GET /api/settings without a token",
		Text:    "GET /api/settings without Authorization answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.get(ctx, "/api/settings", "")
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},
	{
		ID:      "SETTINGS-002",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "GET /api/settings as a regular user",
		Text:    "GET /api/settings with a regular user's token answers 403 \"" + msgNotAllowed + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			r, err := c.get(ctx, "/api/settings", tok)
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgNotAllowed)
			return err
		}),
	},
	{
		ID:      "SETTINGS-003",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "superuser reads the settings",
		Text: "GET /api/settings with a superuser token answers 200 with an object holding the objects meta " +
			"and logs, logs.maxDays being a number.",
		Run: func(ctx context.Context, c *Client) error {
			_, err := c.readSettings(ctx)
			return err
		},
	},
	{
		ID:      "SETTINGS-004",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "negative logs.maxDays refused",
		Text: "PATCH /api/settings as superuser with {\"logs\":{\"maxDays\":-1}} answers 400 \"" + msgSettingsSave +
			"\" with data.logs.maxDays {code \"" + codeMinGreaterThan + "\", message}, and the logs " +
			"settings read afterwards are unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			before, err := c.readSettings(ctx)
			if err != nil {
				return fmt.Errorf("reading the settings first: %w", err)
			}
			c.restoreLogsSettingsOnCleanup(before.logs)
			r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su,
				map[string]any{"logs": map[string]any{"maxDays": -1}})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgSettingsSave)
			if err != nil {
				return err
			}
			logs, ok := getObject(env.data, "logs")
			if !ok {
				return Mismatch("data.logs to be an object of field errors", r.String())
			}
			if err := expectFieldCodes(r, &envelope{data: logs}, codeMinGreaterThan, "maxDays"); err != nil {
				return fmt.Errorf("under data.logs: %w", err)
			}
			after, err := c.readSettings(ctx)
			if err != nil {
				return fmt.Errorf("reading the settings again: %w", err)
			}
			if !reflect.DeepEqual(before.logs, after.logs) {
				return fmt.Errorf("logs after the refused PATCH: %w", Mismatch(jsonText(before.logs)+" (unchanged)", jsonText(after.logs)))
			}
			return nil
		},
	},
}

// The test-email route (PocketBase's forms/test_email_send.go): these checks
// send no mail. The one a superuser sends has an empty body, which every
// server must refuse before it renders or sends anything.

const (
	msgTestEmailFailed = "Failed to send the test email."
	pathTestEmail      = "/api/settings/test/email"
)

var settingsMailRequirements = []*Requirement{
	{
		ID:      "SETTINGS-MAIL-001",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "POST /api/settings/test/email without a token",
		Text:    "POST /api/settings/test/email with a valid body and no Authorization answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, pathTestEmail, "", map[string]any{"email": "conformance@example.com", "template": "otp"})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},
	{
		ID:      "SETTINGS-MAIL-002",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "POST /api/settings/test/email as a regular user",
		Text:    "POST /api/settings/test/email with a valid body and a regular user's token answers 403 \"" + msgNotAllowed + "\".",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			r, err := c.post(ctx, pathTestEmail, tok, map[string]any{"email": "conformance@example.com", "template": "otp"})
			if err != nil {
				return err
			}
			_, err = expectError(r, http.StatusForbidden, msgNotAllowed)
			return err
		}),
	},
	{
		ID:      "SETTINGS-MAIL-003",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "test email with a blank body refused",
		Text: "POST /api/settings/test/email as superuser with {} answers 400 \"" + msgTestEmailFailed +
			"\" with data.email and data.template each {code \"" + codeRequired + "\", message}.",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.post(ctx, pathTestEmail, c.su, map[string]any{})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgTestEmailFailed)
			if err != nil {
				return err
			}
			return expectFieldCodes(r, env, codeRequired, "email", "template")
		},
	},
}

// settingsView is the part of GET /api/settings the suite looks at.
type settingsView struct {
	all     map[string]any
	logs    map[string]any
	maxDays float64
}

// readSettings requires GET /api/settings as superuser to answer 200 with
// the objects meta and logs, logs.maxDays a number.
func (c *Client) readSettings(ctx context.Context) (*settingsView, error) {
	r, m, err := c.getOK(ctx, "/api/settings", c.su)
	if err != nil {
		return nil, err
	}
	if _, ok := getObject(m, "meta"); !ok {
		return nil, Mismatch("settings.meta to be an object", r.String())
	}
	logs, ok := getObject(m, "logs")
	if !ok {
		return nil, Mismatch("settings.logs to be an object", r.String())
	}
	days, ok := getNumber(logs, "maxDays")
	if !ok {
		return nil, Mismatch("settings.logs.maxDays to be a number", r.String())
	}
	return &settingsView{all: m, logs: logs, maxDays: days}, nil
}

// restoreLogsSettingsOnCleanup registers a cleanup that reads the settings
// and, if their logs object is no longer want, patches want back.
func (c *Client) restoreLogsSettingsOnCleanup(want map[string]any) {
	c.Cleanup("restore the logs settings", func(ctx context.Context) error {
		now, err := c.readSettings(ctx)
		if err == nil && reflect.DeepEqual(now.logs, want) {
			return nil
		}
		r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"logs": want})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("PATCH /api/settings %s: expected 200, got %s", jsonText(want), r)
		}
		return nil
	})
}

// requestLoggingOff reports whether the server's settings say request
// logging is off (logs.maxDays 0). It reads GET /api/settings once per run;
// settings that cannot be read count as logging on, so the logs checks then
// behave as they would without this look.
func (c *Client) requestLoggingOff(ctx context.Context) bool {
	s := c.shared
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	if !s.settingsDone {
		st, err := c.readSettings(ctx)
		s.loggingOff = err == nil && st.maxDays == 0
		s.settingsDone = true
	}
	return s.loggingOff
}
