package conformance

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
)

// strongbox's additions to the backups settings (neither the document nor
// PocketBase has them): the daily, weekly and monthly keeps of automatic
// backups and the schedule of the archives' check. Both checks put the
// fields back as they were read.

const (
	sectionBackupsKeep = "§1 (settings: contract not shown); strongbox promise: backups.cronKeepDaily, cronKeepWeekly, cronKeepMonthly and checkCron"
	codeInvalidCron    = "validation_invalid_cron"
)

// keepFields are the fields of backups these checks read and write.
var keepFields = []string{"cronKeepDaily", "cronKeepWeekly", "cronKeepMonthly", "checkCron"}

var backupKeepRequirements = []*Requirement{
	{
		ID:      "BKP-KEEP-001",
		Source:  SourceStrongbox,
		Section: sectionBackupsKeep,
		Name:    "retention keeps and checkCron round-trip",
		Text: "GET /api/settings as superuser shows backups.cronKeepDaily, cronKeepWeekly and cronKeepMonthly (numbers) and " +
			"checkCron (a string); PATCH /api/settings with backups {cronKeepDaily 7, cronKeepWeekly 4, cronKeepMonthly 12, " +
			"checkCron \"15 3 * * 1\"} answers 200, and GET shows exactly those values.",
		Run: func(ctx context.Context, c *Client) error {
			before, err := c.readBackupsKeep(ctx)
			if err != nil {
				return err
			}
			c.restoreBackupsKeepOnCleanup(before)
			want := map[string]any{"cronKeepDaily": float64(7), "cronKeepWeekly": float64(4), "cronKeepMonthly": float64(12), "checkCron": "15 3 * * 1"}
			r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"backups": want})
			if err != nil {
				return err
			}
			if r.status != http.StatusOK {
				return Mismatch("200", r.String())
			}
			got, err := c.readBackupsKeep(ctx)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(got, want) {
				return Mismatch(jsonText(want), jsonText(got))
			}
			return nil
		},
	},
	{
		ID:      "BKP-KEEP-002",
		Source:  SourceStrongbox,
		Section: sectionBackupsKeep,
		Name:    "negative keep and bad checkCron refused",
		Text: "PATCH /api/settings as superuser with backups {cronKeepDaily -1, checkCron \"every week\"} answers 400 \"" +
			msgSettingsSave + "\" with data.backups.cronKeepDaily {code \"" + codeMinGreaterThan + "\"} and " +
			"data.backups.checkCron {code \"" + codeInvalidCron + "\"}; the fields read afterwards are unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			before, err := c.readBackupsKeep(ctx)
			if err != nil {
				return err
			}
			c.restoreBackupsKeepOnCleanup(before)
			r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su,
				map[string]any{"backups": map[string]any{"cronKeepDaily": -1, "checkCron": "every week"}})
			if err != nil {
				return err
			}
			env, err := expectError(r, http.StatusBadRequest, msgSettingsSave)
			if err != nil {
				return err
			}
			backups, ok := getObject(env.data, "backups")
			if !ok {
				return Mismatch("data.backups to be an object of field errors", r.String())
			}
			if err := expectFieldCodes(r, &envelope{data: backups}, codeMinGreaterThan, "cronKeepDaily"); err != nil {
				return fmt.Errorf("under data.backups: %w", err)
			}
			if err := expectFieldCodes(r, &envelope{data: backups}, codeInvalidCron, "checkCron"); err != nil {
				return fmt.Errorf("under data.backups: %w", err)
			}
			after, err := c.readBackupsKeep(ctx)
			if err != nil {
				return err
			}
			if !reflect.DeepEqual(before, after) {
				return fmt.Errorf("after the refused PATCH: %w", Mismatch(jsonText(before)+" (unchanged)", jsonText(after)))
			}
			return nil
		},
	},
}

// readBackupsKeep reads the keeps and checkCron of backups, requiring
// each to be there with its type.
func (c *Client) readBackupsKeep(ctx context.Context) (map[string]any, error) {
	s, err := c.readSettings(ctx)
	if err != nil {
		return nil, err
	}
	b, ok := getObject(s.all, "backups")
	if !ok {
		return nil, Mismatch("settings.backups to be an object", jsonText(s.all))
	}
	out := map[string]any{}
	for _, k := range keepFields {
		v, ok := b[k]
		_, isNum := v.(float64)
		_, isStr := v.(string)
		if !ok || (k == "checkCron" && !isStr) || (k != "checkCron" && !isNum) {
			return nil, Mismatch(fmt.Sprintf("settings.backups.%s (a %s)", k, map[bool]string{true: "string", false: "number"}[k == "checkCron"]), jsonText(b))
		}
		out[k] = v
	}
	return out, nil
}

// restoreBackupsKeepOnCleanup puts the keeps and checkCron back to want
// if they changed.
func (c *Client) restoreBackupsKeepOnCleanup(want map[string]any) {
	c.Cleanup("restore the backups keeps", func(ctx context.Context) error {
		now, err := c.readBackupsKeep(ctx)
		if err == nil && reflect.DeepEqual(now, want) {
			return nil
		}
		r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"backups": want})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("PATCH /api/settings backups %s: expected 200, got %s", jsonText(want), r)
		}
		return nil
	})
}
