package api

import (
	"net/http"
	"time"
)

// StreamState is the state of the continuous backup to the bucket
// (package backup/stream), as the server reports it.
type StreamState struct {
	Enabled        bool
	Generation     string
	LastShipped    time.Time // the instant of the last capture shipped
	Pending        bool      // changes wait to be shipped
	Behind         int64     // their bytes
	RestorableFrom time.Time
	LastError      string
	LastErrorAt    time.Time
	Objects, Bytes int64 // shipped since the server started
}

// streamState is the answer of GET /api/backups/stream. lagMs is how
// long the oldest change not yet shipped has waited (0 when none waits);
// restorableTo is the newest restore point (lastShipped).
type streamState struct {
	Enabled        bool   `json:"enabled"`
	Generation     string `json:"generation"`
	LastShipped    string `json:"lastShipped"`
	LagMs          int64  `json:"lagMs"`
	Behind         int64  `json:"behind"`
	RestorableFrom string `json:"restorableFrom"`
	RestorableTo   string `json:"restorableTo"`
	LastError      string `json:"lastError"`
	LastErrorAt    string `json:"lastErrorAt"`
	Objects        int64  `json:"objects"`
	Bytes          int64  `json:"bytes"`
}

// handleBackupStream handles GET /api/backups/stream: the state of the
// continuous backup, for superusers (strongbox's own route).
func (s *Server) handleBackupStream(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	out := streamState{}
	if s.stream != nil {
		st := s.stream()
		out = streamState{
			Enabled: st.Enabled, Generation: st.Generation, LastShipped: exportTime(st.LastShipped), Behind: st.Behind,
			RestorableFrom: exportTime(st.RestorableFrom), RestorableTo: exportTime(st.LastShipped),
			LastError: st.LastError, LastErrorAt: exportTime(st.LastErrorAt), Objects: st.Objects, Bytes: st.Bytes,
		}
		if st.Pending && !st.LastShipped.IsZero() {
			out.LagMs = time.Since(st.LastShipped).Milliseconds()
		}
	}
	return writeJSON(w, r, http.StatusOK, out)
}
