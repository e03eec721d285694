package api

import (
	"net/http"
	"time"
)

// logExportState is the answer of GET /api/logs/export.
type logExportState struct {
	Enabled     bool   `json:"enabled"`
	Endpoint    string `json:"endpoint"` // scheme://host/path: no user info, no query
	Protocol    string `json:"protocol"`
	Behind      int64  `json:"behind"`
	Exported    int64  `json:"exported"`
	Failed      int64  `json:"failed"`
	Lost        int64  `json:"lost"`
	LastSuccess string `json:"lastSuccess"` // "" = none since start
	LastError   string `json:"lastError"`
	LastErrorAt string `json:"lastErrorAt"`
}

// handleLogExport handles GET /api/logs/export: the state of the OTLP log
// export, for superusers (strongbox's own route; see the package
// documentation).
func (s *Server) handleLogExport(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	stateOf(r).quiet = true
	out := logExportState{}
	if s.logExport != nil {
		if st, on := s.logExport(); on {
			out = logExportState{
				Enabled: true, Endpoint: st.Endpoint, Protocol: st.Protocol,
				Behind: st.Behind, Exported: st.Exported, Failed: st.Failed, Lost: st.Lost,
				LastSuccess: exportTime(st.LastSuccess), LastError: st.LastError, LastErrorAt: exportTime(st.LastErrorAt),
			}
		}
	}
	return writeJSON(w, r, http.StatusOK, out)
}

// exportTime is t as the logs' dates are written, "" for the zero time.
func exportTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05.000Z")
}
