package httpapi

import (
	"errors"
	"fmt"
	"net/http"

	"strongbox/httpapi/settings"
)

// handleSettingsView handles GET /api/settings.
func (s *Server) handleSettingsView(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, s.settings.Get().Public())
}

// handleSettingsUpdate handles PATCH /api/settings. New log settings apply
// to the log store at once: maxDays 0 turns logging off and drops the stored
// logs, as the reference does.
func (s *Server) handleSettingsUpdate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	// Hold the lock until the log store has the new settings too, so that
	// two concurrent changes cannot leave the store and the settings apart.
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	v, err := s.settings.Patch(b)
	if data := validationData(err); data != nil {
		return errValidation("An error occurred while saving the new settings.", data)
	}
	if errors.Is(err, settings.ErrInvalidJSON) {
		return errBadRequest(msgLoadFailed, err)
	}
	if err != nil {
		return err
	}
	if err := s.logs.SetRetention(v.Logs.MaxDays, v.Logs.MinLevel); err != nil {
		return fmt.Errorf("apply log settings: %w", err)
	}
	return writeJSON(w, r, http.StatusOK, v.Public())
}
