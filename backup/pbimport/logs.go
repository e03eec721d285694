package pbimport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
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
	maxDays := im.logMaxDays
	cutoff := im.opts.Now().Add(-time.Duration(maxDays) * 24 * time.Hour)
	n := 0
	err := im.src.Logs(func(l pocketbase.Log) error {
		e, err := logEntry(l)
		if err != nil {
			return fmt.Errorf("log %s: %w", q(l.ID), err)
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
		err = ls.SetRetention(maxDays, im.logMinLevel)
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
// exactly what a logstore.Request reports (requestOf) is stored as one
// (the narrow index); any other data is stored as attributes, as it is.
func logEntry(l pocketbase.Log) (logstore.Entry, error) {
	e := logstore.Entry{ID: l.ID, Created: l.Created, Level: l.Level, Message: l.Message}
	if r, ok := requestOf(l.Data); ok {
		e.Request = r
		return e, nil
	}
	if len(l.Data) > 0 {
		if err := json.Unmarshal(l.Data, &e.Attrs); err != nil {
			return e, fmt.Errorf("data is not a JSON object: %w", err)
		}
	}
	return e, nil
}

// pbRequest is the data of a PocketBase request log, each key present or
// not.
type pbRequest struct {
	Auth      *string         `json:"auth"`
	AuthID    *string         `json:"authId"`
	Details   json.RawMessage `json:"details"`
	Error     *string         `json:"error"`
	ExecTime  *float64        `json:"execTime"`
	Method    *string         `json:"method"`
	Referer   *string         `json:"referer"`
	RemoteIP  *string         `json:"remoteIP"`
	Status    *float64        `json:"status"`
	Type      *string         `json:"type"`
	URL       *string         `json:"url"`
	UserAgent *string         `json:"userAgent"`
	UserIP    *string         `json:"userIP"`
}

// requestOf reads data as a request log's: ok only when its keys, their
// types and which are present are exactly those logstore.Request reports
// (Entry.Data), so that the stored entry answers the same data.
func requestOf(data json.RawMessage) (*logstore.Request, bool) {
	var p pbRequest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if dec.Decode(&p) != nil || dec.More() {
		return nil, false
	}
	if p.Type == nil || *p.Type != "request" || p.Auth == nil || p.ExecTime == nil || p.Method == nil || p.Referer == nil ||
		p.Status == nil || p.URL == nil || p.UserAgent == nil {
		return nil, false
	}
	r := &logstore.Request{Auth: *p.Auth, ExecTime: *p.ExecTime, Method: *p.Method, Referer: *p.Referer, URL: *p.URL, UserAgent: *p.UserAgent}
	if st := *p.Status; st != math.Trunc(st) || math.Abs(st) > math.MaxInt32 {
		return nil, false
	}
	r.Status = int(*p.Status)
	// Data reports authId only when set, error and details together when
	// error is set, and the two addresses together when either is set.
	if r.AuthID = deref(p.AuthID); (p.AuthID != nil) != (r.AuthID != "") {
		return nil, false
	}
	if r.Error = deref(p.Error); (p.Error != nil) != (r.Error != "") || (p.Details != nil) != (r.Error != "") {
		return nil, false
	}
	if p.Details != nil && json.Unmarshal(p.Details, &r.Details) != nil {
		return nil, false
	}
	r.RemoteIP, r.UserIP = deref(p.RemoteIP), deref(p.UserIP)
	logIP := r.RemoteIP != "" || r.UserIP != ""
	if (p.RemoteIP != nil) != logIP || (p.UserIP != nil) != logIP {
		return nil, false
	}
	return r, true
}

// deref returns *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
