package app

import (
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"time"

	"strongbox/backup/pocketbase"
	"strongbox/logstore"
)

// importMaxDays is the retention of the log store while an import writes
// it: none (about 2,800 years), so that no log is dropped on the way in;
// settings.logs applies once every log is in.
const importMaxDays = 1 << 20

// logs imports auxiliary.db's _logs (the step "logs") into a log store
// opened with no minimum level and no retention, flushing every
// opts.BatchSize entries so that memory holds no more than a batch beyond
// the index; a dry run counts them. Then settings.logs applies, and the
// report says how many logs are older than its maxDays.
func (im *importer) logs() error {
	var ls *logstore.Store
	if !im.opts.DryRun {
		var err error
		ls, err = logstore.Open(filepath.Join(im.tmp, "logs"), logstore.Options{
			MaxDays: importMaxDays, MinLevel: math.MinInt, MaxBytes: im.opts.LogsMaxBytes,
		})
		if err != nil {
			return err
		}
	}
	maxDays := im.logSettings.MaxDays
	cutoff := im.opts.Now().Add(-time.Duration(maxDays) * 24 * time.Hour)
	n := 0
	err := im.src.Logs(func(l pocketbase.Log) error {
		e, err := logEntry(l)
		if err != nil {
			return fmt.Errorf("log %s: %w", l.ID, err)
		}
		n++
		if e.Created.Before(cutoff) {
			im.report.LogsExpired++
		}
		if ls == nil {
			return nil
		}
		ls.Add(e)
		if n%im.opts.BatchSize == 0 {
			if err := ls.Flush(); err != nil {
				return err
			}
			return im.ctx.Err()
		}
		return nil
	})
	im.report.Logs, im.report.LogsMaxDays = n, maxDays
	if ls == nil {
		if err != nil {
			return fmt.Errorf("read the logs: %w", err)
		}
		return nil
	}
	if err == nil {
		err = ls.Flush()
	}
	if err == nil {
		err = ls.SetRetention(maxDays, im.logSettings.MinLevel)
	}
	if cerr := ls.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("import the logs: %w", err)
	}
	return nil
}

// logEntry returns the log store's entry for the PocketBase log l: the
// same id, created, level, message and data. A request log whose data is
// exactly what a logstore.Request reports is stored as one (the narrow
// index); any other data is stored as attributes, as it is.
func logEntry(l pocketbase.Log) (logstore.Entry, error) {
	e := logstore.Entry{ID: l.ID, Created: l.Created, Level: l.Level, Message: l.Message}
	var data map[string]any
	if len(l.Data) > 0 {
		if err := json.Unmarshal(l.Data, &data); err != nil {
			return e, fmt.Errorf("data is not a JSON object: %w", err)
		}
	}
	if r, ok := requestOf(data); ok && reflect.DeepEqual(logstore.Entry{Request: r}.Data(), data) {
		e.Request = r
		return e, nil
	}
	e.Attrs = data
	return e, nil
}

// requestOf reads the data of a request log into a logstore.Request; ok
// is false when data is not a request log's shape.
func requestOf(data map[string]any) (*logstore.Request, bool) {
	if data["type"] != "request" {
		return nil, false
	}
	str := func(k string) string { s, _ := data[k].(string); return s }
	status, _ := data["status"].(float64)
	execTime, _ := data["execTime"].(float64)
	if status != math.Trunc(status) || math.Abs(status) > math.MaxInt32 {
		return nil, false
	}
	return &logstore.Request{
		Auth: str("auth"), AuthID: str("authId"), ExecTime: execTime, Method: str("method"), Referer: str("referer"),
		RemoteIP: str("remoteIP"), Status: int(status), URL: str("url"), UserAgent: str("userAgent"), UserIP: str("userIP"),
		Error: str("error"), Details: data["details"],
	}, true
}
