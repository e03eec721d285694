package conformance

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"strongbox/backup"
	"strongbox/backup/backuptest"
	"strongbox/httpapi/app"
	"strongbox/httpapi/settings"
)

// startStrongboxS3 is startStrongbox with its archives on S3: the server
// makes its bucket client with newObj, and backups.s3 is enabled with s3
// (through PATCH /api/settings, as an operator would) before it returns.
// It is the hook of a run of the backup requirements on a bucket: an
// in-memory one here (TestBackupsOnS3), a real S3 server once a client is
// wired (newObj making it from the settings).
func startStrongboxS3(t testing.TB, s3 settings.S3, newObj func(settings.S3) (backup.ObjectStore, error)) string {
	t.Helper()
	base := startStrongboxIn(t, t.TempDir(), func(c *app.Config) { c.ObjectStore = newObj })
	s3.Enabled = true
	body, _ := json.Marshal(map[string]any{"backups": map[string]any{"s3": s3}})
	req, _ := http.NewRequest(http.MethodPatch, base+"/api/settings", strings.NewReader(string(body)))
	req.Header.Set("Authorization", (&front{base: base}).superuser())
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("enabling backups.s3: %v", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("enabling backups.s3: %s", res.Status)
	}
	return base
}

// TestBackupsOnS3 runs the backup requirements against a strongbox whose
// archives are in a bucket (an in-memory one): every one passes or, for
// the full restore (which needs a server that can re-execute itself), is
// skipped; and the archives the run made went to the bucket.
func TestBackupsOnS3(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the backup checks")
	}
	bucket := &backuptest.Bucket{}
	base := startStrongboxS3(t, settings.S3{Bucket: "b", Region: "us-east-1", Endpoint: "http://127.0.0.1:1", AccessKey: "k", Secret: "s"},
		func(settings.S3) (backup.ObjectStore, error) { return bucket, nil })
	rep := Run(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword, Only: "BKP-", Profile: SourceStrongbox})
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	counts := map[Outcome]int{}
	for _, res := range rep.Results {
		counts[res.Outcome]++
		switch {
		case res.Outcome == Pass:
		case res.Outcome == Skip && res.Req.ID == "BKP-FULLRESTORE-001":
		default:
			t.Errorf("%s: %v %s", res.Req.ID, res.Outcome, res.Detail)
		}
	}
	t.Logf("%d backup requirements on S3: %v", len(rep.Results), counts)
	if counts[Pass] == 0 {
		t.Fatal("no backup requirement passed")
	}
	if len(bucket.Gets()) == 0 {
		t.Error("no archive was read from the bucket: the run did not use it")
	}
}
