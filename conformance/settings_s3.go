package conformance

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
)

// The settings of backups on S3 and their test route, as PocketBase
// v0.31.0 shapes them (its backups.s3 settings and POST
// /api/settings/test/s3). Every check answers without a reachable bucket:
// the shape of the settings, refusals of invalid settings (nothing is
// saved), and refusals of the test route before it talks to any bucket.

const (
	msgTestS3Failed = "Failed to test the S3 filesystem."
	pathTestS3      = "/api/settings/test/s3"
	codeIsURL       = "validation_is_url"
)

// s3Fields are the string fields of backups.s3 besides the write-only
// secret.
var s3Fields = []string{"bucket", "region", "endpoint", "accessKey"}

var settingsS3Requirements = []*Requirement{
	{
		ID:      "SETTINGS-S3-001",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "backups.s3 in the settings, secret never shown",
		Text: "GET /api/settings as superuser answers 200 with backups.s3 an object of enabled and forcePathStyle " +
			"(booleans) and bucket, region, endpoint and accessKey (strings), without a non-empty secret.",
		Run: func(ctx context.Context, c *Client) error {
			s3, err := c.readBackupsS3(ctx)
			if err != nil {
				return err
			}
			if s, _ := s3["secret"].(string); s != "" {
				return Mismatch("backups.s3 without its secret", jsonText(s3))
			}
			return nil
		},
	},
	{
		ID:      "SETTINGS-S3-002",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "backups.s3 enabled without its fields refused",
		Text: "PATCH /api/settings as superuser with backups.s3 {enabled true, bucket, region, endpoint and accessKey \"\"} " +
			"answers 400 \"" + msgSettingsSave + "\" with data.backups.s3 bucket, region, endpoint and accessKey each {code \"" +
			codeRequired + "\"}; with those set but endpoint \"not a url\", 400 with data.backups.s3.endpoint {code \"" + codeIsURL +
			"\"}; backups.s3 read afterwards is unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			before, err := c.readBackupsS3(ctx)
			if err != nil {
				return fmt.Errorf("reading the settings first: %w", err)
			}
			c.restoreBackupsS3OnCleanup(before)
			blank := map[string]any{"enabled": true, "bucket": "", "region": "", "endpoint": "", "accessKey": ""}
			if err := c.refusedS3(ctx, blank, codeRequired, s3Fields...); err != nil {
				return err
			}
			badURL := map[string]any{"enabled": true, "bucket": "cf-bucket", "region": "us-east-1", "endpoint": "not a url",
				"accessKey": "cf-key", "secret": "cf-secret"}
			if err := c.refusedS3(ctx, badURL, codeIsURL, "endpoint"); err != nil {
				return err
			}
			after, err := c.readBackupsS3(ctx)
			if err != nil {
				return fmt.Errorf("reading the settings again: %w", err)
			}
			if !reflect.DeepEqual(before, after) {
				return fmt.Errorf("backups.s3 after the refused PATCHes: %w", Mismatch(jsonText(before)+" (unchanged)", jsonText(after)))
			}
			return nil
		},
	},
	{
		ID:      "SETTINGS-S3-003",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "S3 test refused for guests and users",
		Text: "POST /api/settings/test/s3 with {\"filesystem\":\"backups\"} answers 401 \"" + msgNeedsToken +
			"\" without Authorization and 403 \"" + msgNotAllowed + "\" with a regular user's token.",
		Run: withUserToken(func(ctx context.Context, c *Client, _ *user, tok string) error {
			body := map[string]any{"filesystem": "backups"}
			r, err := c.post(ctx, pathTestS3, "", body)
			if err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusUnauthorized, msgNeedsToken); err != nil {
				return fmt.Errorf("as a guest: %w", err)
			}
			if r, err = c.post(ctx, pathTestS3, tok, body); err != nil {
				return err
			}
			if _, err := expectError(r, http.StatusForbidden, msgNotAllowed); err != nil {
				return fmt.Errorf("as a regular user: %w", err)
			}
			return nil
		}),
	},
	{
		ID:      "SETTINGS-S3-004",
		Source:  SourcePocketBase,
		Section: sectionSettings,
		Name:    "S3 test with a bad or absent filesystem refused",
		Text: "POST /api/settings/test/s3 as superuser with {} answers 400 \"" + msgTestS3Failed + "\" with data.filesystem {code \"" +
			codeRequired + "\"}; with {\"filesystem\":\"x\"}, 400 with data.filesystem {code \"" + codeInInvalid +
			"\"}; with {\"filesystem\":\"storage\"} (S3 file storage not enabled), 400 with a message starting \"" +
			msgTestS3Failed + "\".",
		Run: func(ctx context.Context, c *Client) error {
			for _, tt := range []struct {
				body map[string]any
				code string
			}{{map[string]any{}, codeRequired}, {map[string]any{"filesystem": "x"}, codeInInvalid}} {
				r, err := c.post(ctx, pathTestS3, c.su, tt.body)
				if err != nil {
					return err
				}
				env, err := expectError(r, http.StatusBadRequest, msgTestS3Failed)
				if err == nil {
					err = expectFieldCodes(r, env, tt.code, "filesystem")
				}
				if err != nil {
					return fmt.Errorf("with %s: %w", jsonText(tt.body), err)
				}
			}
			r, err := c.post(ctx, pathTestS3, c.su, map[string]any{"filesystem": "storage"})
			if err != nil {
				return err
			}
			env, err := parseEnvelope(r)
			if err != nil || r.status != http.StatusBadRequest || !strings.HasPrefix(env.message, msgTestS3Failed) {
				return Mismatch(fmt.Sprintf("400 with a message starting %q", msgTestS3Failed), r.String())
			}
			return nil
		},
	},
}

// readBackupsS3 reads backups.s3 of the settings and checks its shape.
func (c *Client) readBackupsS3(ctx context.Context) (map[string]any, error) {
	v, err := c.readSettings(ctx)
	if err != nil {
		return nil, err
	}
	backups, _ := getObject(v.all, "backups")
	s3, ok := getObject(backups, "s3")
	if !ok {
		return nil, Mismatch("settings.backups.s3 to be an object", jsonText(v.all))
	}
	for _, k := range []string{"enabled", "forcePathStyle"} {
		if _, ok := s3[k].(bool); !ok {
			return nil, Mismatch("backups.s3."+k+" to be a boolean", jsonText(s3))
		}
	}
	for _, k := range s3Fields {
		if _, ok := s3[k].(string); !ok {
			return nil, Mismatch("backups.s3."+k+" to be a string", jsonText(s3))
		}
	}
	return s3, nil
}

// refusedS3 PATCHes backups.s3 with s3 and expects the settings refusal
// with code on each of fields under data.backups.s3.
func (c *Client) refusedS3(ctx context.Context, s3 map[string]any, code string, fields ...string) error {
	r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"backups": map[string]any{"s3": s3}})
	if err != nil {
		return err
	}
	env, err := expectError(r, http.StatusBadRequest, msgSettingsSave)
	if err != nil {
		return err
	}
	backups, _ := getObject(env.data, "backups")
	sec, ok := getObject(backups, "s3")
	if !ok {
		return Mismatch("data.backups.s3 to be an object of field errors", r.String())
	}
	if err := expectFieldCodes(r, &envelope{data: sec}, code, fields...); err != nil {
		return fmt.Errorf("under data.backups.s3: %w", err)
	}
	return nil
}

// restoreBackupsS3OnCleanup registers a cleanup that puts backups.s3 back
// to want (its secret aside, which is never read) if a PATCH that should
// have been refused changed it.
func (c *Client) restoreBackupsS3OnCleanup(want map[string]any) {
	c.Cleanup("restore backups.s3", func(ctx context.Context) error {
		now, err := c.readBackupsS3(ctx)
		if err == nil && reflect.DeepEqual(now, want) {
			return nil
		}
		r, err := c.do(ctx, http.MethodPatch, "/api/settings", c.su, map[string]any{"backups": map[string]any{"s3": want}})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			return fmt.Errorf("PATCH /api/settings backups.s3 %s: expected 200, got %s", jsonText(want), r)
		}
		return nil
	})
}
