package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
)

// strongbox's continuous backup (neither the document nor PocketBase has
// it): the state route and the rule that it ships only to a bucket. The
// suite cannot see a bucket, so shipping itself and the point-in-time
// restore are checked by the project's own tests against a real S3
// gateway (TestStreamKill, TestStreamEncrypted), not here.

const sectionBackupsStream = "§1 (settings: contract not shown); strongbox promise: backups.continuous and GET /api/backups/stream"

var backupStreamRequirements = []*Requirement{
	{
		ID:      "STREAM-001",
		Source:  SourceStrongbox,
		Section: sectionBackupsStream,
		Name:    "the continuous backup's state, for superusers only",
		Text: "GET /api/backups/stream as superuser answers 200 with an object holding enabled (a boolean), lastShipped, " +
			"restorableFrom, restorableTo and lastError (strings) and lagMs (a number); as a guest it answers 401 \"" + msgNeedsToken + "\".",
		Run: func(ctx context.Context, c *Client) error {
			r, err := c.do(ctx, http.MethodGet, "/api/backups/stream", c.su, nil)
			if err != nil {
				return err
			}
			if r.status != http.StatusOK {
				return Mismatch("200", r.String())
			}
			var st map[string]any
			if err := json.Unmarshal(r.body, &st); err != nil || st == nil {
				return Mismatch("a JSON object", r.String())
			}
			kinds := map[string]reflect.Kind{"enabled": reflect.Bool, "lastShipped": reflect.String, "restorableFrom": reflect.String,
				"restorableTo": reflect.String, "lastError": reflect.String, "lagMs": reflect.Float64}
			for k, kind := range kinds {
				if v, ok := st[k]; !ok || v == nil || reflect.TypeOf(v).Kind() != kind {
					return Mismatch(fmt.Sprintf("%s (a %s)", k, kind), r.String())
				}
			}
			g, err := c.do(ctx, http.MethodGet, "/api/backups/stream", "", nil)
			if err != nil {
				return err
			}
			_, err = expectError(g, http.StatusUnauthorized, msgNeedsToken)
			return err
		},
	},
	{
		ID:      "STREAM-002",
		Source:  SourceStrongbox,
		Section: sectionBackupsStream,
		Name:    "continuous backup refused without the bucket",
		Text: "While settings.backups.s3.enabled is false, PATCH /api/settings as superuser with backups {continuous {enabled true}} answers 400 \"" +
			msgSettingsSave + "\" with data.backups.continuous.enabled {code \"" + codeRequired + "\"}, and " +
			"settings.backups.continuous.enabled stays false.",
		Run: func(ctx context.Context, c *Client) error {
			s, err := c.readSettings(ctx)
			if err != nil {
				return err
			}
			b, _ := getObject(s.all, "backups")
			s3, _ := getObject(b, "s3")
			cont, ok := getObject(b, "continuous")
			if !ok {
				return Mismatch("settings.backups.continuous to be an object", jsonText(b))
			}
			if s3["enabled"] == true || cont["enabled"] == true {
				return Skipf("the server's backups.s3 or continuous backup is enabled: the check needs both off")
			}
			r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su,
				map[string]any{"backups": map[string]any{"continuous": map[string]any{"enabled": true}}})
			if err != nil {
				return err
			}
			if r.status == http.StatusOK {
				c.Cleanup("turn continuous backup off", func(ctx context.Context) error {
					_, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su,
						map[string]any{"backups": map[string]any{"continuous": map[string]any{"enabled": false}}})
					return err
				})
			}
			env, err := expectError(r, http.StatusBadRequest, msgSettingsSave)
			if err != nil {
				return err
			}
			backups, _ := getObject(env.data, "backups")
			inner, ok := getObject(backups, "continuous")
			if !ok {
				return Mismatch("data.backups.continuous to be an object of field errors", r.String())
			}
			return expectFieldCodes(r, &envelope{data: inner}, codeRequired, "enabled")
		},
	},
}
