package api

import (
	"errors"
	"net/http"

	"strongbox/backup"
)

// BackupCheck is the check of the stored archives (strongbox's own; see
// strongbox/httpapi/app): every archive read through and verified, on
// the schedule of backups.checkCron or on demand.
type BackupCheck interface {
	// Start starts a check in the background; false if one is running.
	Start() bool
	// State returns the last check that ended (nil if none since the
	// process started) and whether one is running.
	State() (last *backup.CheckReport, running bool)
}

// msgCheckRunning answers a POST /api/backups/check while one runs, in
// the words of the backup lock's message.
const msgCheckRunning = "Try again later - a check of the backups is already running."

// errNoCheck is the cause logged when Config.BackupCheck is nil.
var errNoCheck = errors.New("httpapi: no backup check")

// checkState is the answer of GET /api/backups/check.
type checkState struct {
	Running bool         `json:"running"`
	Last    *checkReport `json:"last"` // null until a check ended
}

type checkReport struct {
	Started string       `json:"started"`
	Ended   string       `json:"ended"`
	Checked int          `json:"checked"`
	Gone    int          `json:"gone"`
	Bytes   int64        `json:"bytes"`
	Bad     []checkedBad `json:"bad"`
	Error   string       `json:"error"`
}

type checkedBad struct {
	Key    string `json:"key"`
	Reason string `json:"reason"`
	Unread bool   `json:"unread"`
}

// handleBackupCheckState handles GET /api/backups/check: the last check
// of the stored archives and whether one runs, for superusers.
func (s *Server) handleBackupCheckState(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	if s.backupCheck == nil {
		return errBadRequest(msgBackupsLoad, errNoCheck)
	}
	last, running := s.backupCheck.State()
	out := checkState{Running: running}
	if last != nil {
		out.Last = &checkReport{Started: exportTime(last.Started), Ended: exportTime(last.Ended), Checked: last.Checked,
			Gone: last.Gone, Bytes: last.Bytes, Bad: []checkedBad{}, Error: last.Err}
		for _, b := range last.Bad {
			out.Last.Bad = append(out.Last.Bad, checkedBad{Key: b.Key, Reason: b.Reason, Unread: b.Unread})
		}
	}
	return writeJSON(w, r, http.StatusOK, out)
}

// handleBackupCheckRun handles POST /api/backups/check: starts a check of
// the stored archives now and answers 204 at once (GET tells its end), or
// 400 while one runs.
func (s *Server) handleBackupCheckRun(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	if s.backupCheck == nil {
		return errBadRequest(msgBackupsLoad, errNoCheck)
	}
	if !s.backupCheck.Start() {
		return errBadRequest(msgCheckRunning, nil)
	}
	return noContent(w)
}
