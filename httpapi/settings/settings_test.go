package settings

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"strongbox/authn/validation"
	"strongbox/backup/cron"
)

// patch updates s with a JSON document decoded over the current settings,
// as the API's PATCH /api/settings does.
func patch(s *Store, body string) (Settings, error) {
	return s.Update(func(v *Settings) error { return json.Unmarshal([]byte(body), v) })
}

func TestPatchPersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.journal")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get(); got.Logs.MaxDays != 5 || !got.Logs.LogIP || got.Meta.AppName != "Acme" {
		t.Errorf("defaults = %+v", got)
	}
	if _, err := patch(s, `{"logs":{"maxDays":2},"smtp":{"password":"pw"}}`); err != nil {
		t.Fatal(err)
	}
	// An empty secret keeps the stored one.
	if _, err := patch(s, `{"smtp":{"password":"","host":"mail.example.com"}}`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got := s2.Get()
	if got.Logs.MaxDays != 2 || got.SMTP.Password != "pw" || got.SMTP.Host != "mail.example.com" || !got.Logs.LogIP {
		t.Errorf("after reopen = %+v", got)
	}
	if p := got.Public(); p.SMTP.Password != "" {
		t.Errorf("Public keeps the smtp password")
	}
}

func TestPatchValidation(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tests := []struct {
		body, section, field string
	}{
		{`{"logs":{"maxDays":-1}}`, "logs", "maxDays"},
		{`{"meta":{"appName":""}}`, "meta", "appName"},
		{`{"meta":{"appURL":"not a url"}}`, "meta", "appURL"},
		{`{"meta":{"senderAddress":"x"}}`, "meta", "senderAddress"},
		{`{"smtp":{"enabled":true,"host":""}}`, "smtp", "host"},
		{`{"smtp":{"host":"smtp.example.com\r\nX: y"}}`, "smtp", "host"},
		{`{"smtp":{"enabled":true,"port":0}}`, "smtp", "port"},
		{`{"smtp":{"port":-1}}`, "smtp", "port"},
		{`{"smtp":{"authMethod":"CRAM-MD5"}}`, "smtp", "authMethod"},
		{`{"smtp":{"localName":"a b"}}`, "smtp", "localName"},
		{`{"backups":{"cron":"every day"}}`, "backups", "cron"},
		{`{"backups":{"cron":"0 0 * * *","cronMaxKeep":0}}`, "backups", "cronMaxKeep"},
		{`{"backups":{"cron":"0 0 * * *","cronMaxKeep":-1}}`, "backups", "cronMaxKeep"},
		{`{"backups":{"cron":"","cronMaxKeep":-1}}`, "backups", "cronMaxKeep"},
		{`{"backups":{"cronKeepDaily":-1}}`, "backups", "cronKeepDaily"},
		{`{"backups":{"cronKeepWeekly":-1}}`, "backups", "cronKeepWeekly"},
		{`{"backups":{"cronKeepMonthly":-1}}`, "backups", "cronKeepMonthly"},
		{`{"backups":{"checkCron":"weekly"}}`, "backups", "checkCron"},
		{`{"s3":{"enabled":true}}`, "s3", "bucket"},
		{`{"trustedProxy":{"headers":["bad header"]}}`, "trustedProxy", "headers"},
	}
	for _, tt := range tests {
		_, err := patch(s, tt.body)
		var ve validation.Errors
		if !errors.As(err, &ve) {
			t.Errorf("patch(%s) = %v, want a validation.Errors", tt.body, err)
			continue
		}
		sec, _ := ve[tt.section].(validation.Errors)
		if sec[tt.field] == nil {
			t.Errorf("patch(%s) = %v, want an error on %s.%s", tt.body, ve, tt.section, tt.field)
		}
	}
	errEdit := errors.New("edit failed")
	_, err = s.Update(func(v *Settings) error {
		v.Logs.MaxDays = 1
		return errEdit
	})
	if err != errEdit {
		t.Errorf("Update with a failing edit = %v, want the edit's error as it is", err)
	}
	if got := s.Get().Logs.MaxDays; got != 5 {
		t.Errorf("a refused patch changed the settings: maxDays %d", got)
	}
}

// TestS3Unsupported: a complete S3 configuration of file storage is
// refused with validation_unsupported on enabled (strongbox stores no
// files), rather than accepted while no file ever goes there.
func TestS3Unsupported(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	const full = `{"enabled":true,"bucket":"b","region":"r","endpoint":"https://s3.example.com","accessKey":"k","secret":"s"}`
	_, err = patch(s, `{"s3":`+full+`}`)
	var ve validation.Errors
	if !errors.As(err, &ve) {
		t.Fatalf("patch = %v, want a validation.Errors", err)
	}
	sec, _ := ve["s3"].(validation.Errors)
	fe, _ := sec["enabled"].(*validation.Error)
	if fe == nil || fe.Code != validation.CodeUnsupported || len(sec) != 1 {
		t.Errorf("patch = %v, want only s3.enabled %s", ve, validation.CodeUnsupported)
	}
	if s.Get().S3.Enabled {
		t.Error("a refused S3 configuration was saved")
	}
}

// TestBackupsS3: backups.s3 is validated as PocketBase v0.31.0 validates
// it (required fields when enabled, the endpoint a URL, here http(s)), a
// valid bucket is kept, its secret is never public and survives a patch
// that omits it.
func TestBackupsS3(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req, url := validation.CodeRequired, validation.CodeIsURL
	for _, tt := range []struct {
		body string
		want map[string]string // field: code; nil = accepted
	}{
		{`{"enabled":true}`, map[string]string{"bucket": req, "region": req, "endpoint": req, "accessKey": req, "secret": req}},
		{`{"enabled":true,"bucket":"b","region":"r","endpoint":"ftp://s3.example.com","accessKey":"k","secret":"s"}`, map[string]string{"endpoint": url}},
		{`{"enabled":true,"bucket":"b","region":"r","endpoint":"not a url","accessKey":"k","secret":"s"}`, map[string]string{"endpoint": url}},
		{`{"enabled":true,"bucket":"","region":"r","endpoint":"http://127.0.0.1:9000","accessKey":"k","secret":"s"}`, map[string]string{"bucket": req}},
		{`{"enabled":false,"bucket":"","region":""}`, nil},
		{`{"enabled":true,"bucket":"b","region":"r","endpoint":"http://127.0.0.1:9000","accessKey":"k","secret":"sekrit","forcePathStyle":true}`, nil},
	} {
		_, err := patch(s, `{"backups":{"s3":`+tt.body+`}}`)
		got := map[string]string{}
		if ve, ok := errors.AsType[validation.Errors](err); ok {
			bk, _ := ve["backups"].(validation.Errors)
			sec, _ := bk["s3"].(validation.Errors)
			for k, v := range sec {
				got[k] = v.(*validation.Error).Code
			}
		} else if err != nil {
			t.Fatalf("patch(%s) = %v", tt.body, err)
		}
		if tt.want == nil {
			tt.want = map[string]string{}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("patch(%s) errors (-want +got):\n%s", tt.body, diff)
		}
	}
	v, err := patch(s, `{"backups":{"s3":{"region":"eu"}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Backups.S3; !got.Enabled || got.Secret != "sekrit" || got.Region != "eu" || !got.ForcePathStyle {
		t.Errorf("after a patch without the secret: %+v, want it kept", got)
	}
	if pub := v.Public().Backups.S3; pub.Secret != "" {
		t.Errorf("public backups.s3 holds the secret")
	}
}

// TestBatch: the batch section has PocketBase's defaults and validation
// (as a running v0.31.0 answered the same bodies), a valid change is kept,
// and enabling it, which would promise a /api/batch endpoint strongbox
// does not have, is refused with validation_unsupported.
func TestBatch(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, want := s.Get().Batch, (Batch{MaxRequests: 50, Timeout: 3}); got != want {
		t.Errorf("default batch = %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		body string
		want map[string]string // field → code; nil: accepted
	}{
		{`{"batch":{"enabled":false,"maxRequests":0}}`, nil},
		{`{"batch":{"maxRequests":-1,"timeout":-2}}`, map[string]string{"maxRequests": validation.CodeMinGreaterEqual, "timeout": validation.CodeMinGreaterEqual}},
		{`{"batch":{"enabled":true,"maxRequests":0,"timeout":0,"maxBodySize":-1}}`,
			map[string]string{"maxRequests": validation.CodeRequired, "timeout": validation.CodeRequired, "maxBodySize": validation.CodeMinGreaterEqual}},
		{`{"batch":{"enabled":true,"maxRequests":50,"timeout":3}}`, map[string]string{"enabled": validation.CodeUnsupported}},
	} {
		_, err := patch(s, tt.body)
		if tt.want == nil {
			if err != nil {
				t.Errorf("patch(%s) = %v, want it accepted", tt.body, err)
			}
			continue
		}
		var ve validation.Errors
		if !errors.As(err, &ve) {
			t.Fatalf("patch(%s) = %v, want a validation.Errors", tt.body, err)
		}
		sec, _ := ve["batch"].(validation.Errors)
		got := map[string]string{}
		for k, v := range sec {
			if fe, ok := v.(*validation.Error); ok {
				got[k] = fe.Code
			}
		}
		if !maps.Equal(got, tt.want) || len(ve) != 1 {
			t.Errorf("patch(%s) = %v, want batch %v", tt.body, ve, tt.want)
		}
	}
	if got := s.Get().Batch; got.Enabled || got.MaxRequests != 0 {
		t.Errorf("batch = %+v, want the accepted change only (enabled false, maxRequests 0)", got)
	}
}

// TestCronMaxKeep checks PocketBase v0.31.0's cronMaxKeep rule with the
// codes and messages PocketBase gives: required when cron is set, and at
// least 1 whenever it is not 0.
func TestCronMaxKeep(t *testing.T) {
	tests := []struct {
		name     string
		body     string
		wantCode string // "" = accepted
	}{
		{"zero without cron", `{"backups":{"cron":"","cronMaxKeep":0}}`, ""},
		{"one with cron", `{"backups":{"cron":"@daily","cronMaxKeep":1}}`, ""},
		{"zero with cron", `{"backups":{"cron":"@daily","cronMaxKeep":0}}`, validation.CodeRequired},
		{"negative with cron", `{"backups":{"cron":"@daily","cronMaxKeep":-2}}`, validation.CodeMinGreaterEqual},
		{"negative without cron", `{"backups":{"cron":"","cronMaxKeep":-2}}`, validation.CodeMinGreaterEqual},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			_, err = patch(s, tt.body)
			if tt.wantCode == "" {
				if err != nil {
					t.Fatalf("patch(%s) = %v, want accepted", tt.body, err)
				}
				return
			}
			ve, ok := errors.AsType[validation.Errors](err)
			if !ok {
				t.Fatalf("patch(%s) = %v, want a validation.Errors", tt.body, err)
			}
			sec, _ := ve["backups"].(validation.Errors)
			got, _ := sec["cronMaxKeep"].(*validation.Error)
			if got == nil || got.Code != tt.wantCode {
				t.Errorf("patch(%s): backups.cronMaxKeep = %v, want code %s", tt.body, sec["cronMaxKeep"], tt.wantCode)
			}
		})
	}
}

func TestTornSettings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	s, _ := Open(path, Options{})
	patch(s, `{"logs":{"maxDays":3}}`)
	before, _ := os.Stat(path)
	patch(s, `{"logs":{"maxDays":4}}`)
	s.Close()
	full, _ := os.ReadFile(path)
	for cut := before.Size(); cut < int64(len(full)); cut++ {
		os.WriteFile(path, full[:cut], 0o600)
		s2, err := Open(path, Options{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if got := s2.Get().Logs.MaxDays; got != 3 {
			t.Errorf("cut %d: maxDays %d, want 3 (the last whole change)", cut, got)
		}
		s2.Close()
	}
}

// TestBackupsCron: backups.cron is checked by backup/cron's parser, with
// PocketBase's message for each fault.
func TestBackupsCron(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "settings.journal"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tt := range []struct{ cron, msg string }{
		{"@daily", ""},
		{"0 3 * * 1-5", ""},
		{"*/15 * * * *", ""},
		{"60 * * * *", "Invalid segment value - must be between the min and max of the segment."},
		{"0 0 * * 7", "Invalid segment value - must be between the min and max of the segment."},
		{"* * * *", "Invalid cron expression - must be a valid macro or to have exactly 5 space separated segments."},
		{"@every", "Invalid cron expression - must be a valid macro or to have exactly 5 space separated segments."},
	} {
		_, err := patch(s, `{"backups":{"cron":`+strconv.Quote(tt.cron)+`,"cronMaxKeep":3}}`)
		if tt.msg == "" {
			if err != nil {
				t.Errorf("cron %q: %v, want it accepted", tt.cron, err)
			}
			continue
		}
		var ve validation.Errors
		if !errors.As(err, &ve) {
			t.Errorf("cron %q: %v, want a validation.Errors", tt.cron, err)
			continue
		}
		fe, _ := ve["backups"].(validation.Errors)["cron"].(*validation.Error)
		if fe == nil || fe.Code != validation.CodeInvalidCron || fe.Message != tt.msg {
			t.Errorf("cron %q: %v, want %s %q", tt.cron, ve, validation.CodeInvalidCron, tt.msg)
		}
	}
}

// TestBackupsKeep: the keeps and checkCron round-trip through the store
// and its journal, default to 0 and DefaultCheckCron, and are refused
// with the codes and messages of their rules.
func TestBackupsKeep(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.journal")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Get().Backups.BackupsKeep; got != (BackupsKeep{CheckCron: DefaultCheckCron}) {
		t.Fatalf("new data dir: %+v, want no keeps and checkCron %q", got, DefaultCheckCron)
	}
	want := BackupsKeep{CronKeepDaily: 7, CronKeepWeekly: 4, CronKeepMonthly: 12, CheckCron: ""}
	if _, err := patch(s, `{"backups":{"cronKeepDaily":7,"cronKeepWeekly":4,"cronKeepMonthly":12,"checkCron":""}}`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.Get().Backups.BackupsKeep; got != want {
		t.Fatalf("reopened: %+v, want %+v", got, want)
	}
	for _, tt := range []struct{ body, field, code, msg string }{
		{`{"backups":{"cronKeepDaily":-1}}`, "cronKeepDaily", validation.CodeMinGreaterEqual, "Must be no less than 0."},
		{`{"backups":{"cronKeepMonthly":-3}}`, "cronKeepMonthly", validation.CodeMinGreaterEqual, "Must be no less than 0."},
		{`{"backups":{"checkCron":"0 0 * *"}}`, "checkCron", validation.CodeInvalidCron, cron.InvalidMessage},
		{`{"backups":{"checkCron":"0 25 * * *"}}`, "checkCron", validation.CodeInvalidCron, "Invalid segment value - must be between the min and max of the segment."},
	} {
		_, err := patch(s, tt.body)
		ve, _ := errors.AsType[validation.Errors](err)
		fe, _ := ve["backups"].(validation.Errors)[tt.field].(*validation.Error)
		if fe == nil || fe.Code != tt.code || fe.Message != tt.msg {
			t.Errorf("patch(%s) = %v, want backups.%s %s %q", tt.body, err, tt.field, tt.code, tt.msg)
		}
	}
	if got := s.Get().Backups.BackupsKeep; got != want {
		t.Errorf("after refused changes: %+v, want %+v", got, want)
	}
}

// TestBackupsContinuous: backups.continuous needs backups.s3 enabled,
// retentionDays is 0 (the default, 7 days) to 3650, and a new data dir
// has it off with 7 days.
func TestBackupsContinuous(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if c := s.Get().Backups.Continuous; c.Enabled || c.RetentionDays != 7 || c.Retention() != 7*24*time.Hour {
		t.Fatalf("default = %+v", c)
	}
	bucket := `"s3":{"enabled":true,"bucket":"b","region":"r","endpoint":"http://127.0.0.1:9000","accessKey":"k","secret":"s"}`
	for _, tt := range []struct {
		body string
		want map[string]string // field: code; nil = accepted
	}{
		{`{"continuous":{"enabled":true}}`, map[string]string{"enabled": validation.CodeRequired}},
		{`{"continuous":{"enabled":true,"retentionDays":-1}}`, map[string]string{"enabled": validation.CodeRequired, "retentionDays": validation.CodeMinGreaterEqual}},
		{`{"continuous":{"retentionDays":3651}}`, map[string]string{"retentionDays": validation.CodeMaxLessEqual}},
		{`{` + bucket + `,"continuous":{"enabled":true,"retentionDays":0}}`, nil},
		{`{` + bucket + `,"continuous":{"enabled":true,"retentionDays":30}}`, nil},
	} {
		v, err := patch(s, `{"backups":`+tt.body+`}`)
		got := map[string]string{}
		if ve, ok := errors.AsType[validation.Errors](err); ok {
			bk, _ := ve["backups"].(validation.Errors)
			sec, _ := bk["continuous"].(validation.Errors)
			for k, v := range sec {
				got[k] = v.(*validation.Error).Code
			}
		} else if err != nil {
			t.Fatalf("patch(%s) = %v", tt.body, err)
		} else if !v.Backups.Continuous.Enabled {
			t.Errorf("patch(%s) accepted but not enabled", tt.body)
		}
		if tt.want == nil {
			tt.want = map[string]string{}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("patch(%s) errors (-want +got):\n%s", tt.body, diff)
		}
	}
	if got := s.Get().Backups.Continuous.Retention(); got != 30*24*time.Hour {
		t.Errorf("retention = %v, want 30 days", got)
	}
}
