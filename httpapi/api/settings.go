package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"strongbox/httpapi/settings"
	"strongbox/logstore/journal"
)

// The settings routes, and the server's part of the settings. There is one
// path for a change: the PATCH handler decodes the body, and the store
// validates and commits it, then calls its subscribers before it
// acknowledges the change. Each subsystem applies its own part as a
// subscriber, and strongbox/httpapi/app, the server lifecycle, owns every
// subscription (subscribeSettings there): this server applies the request
// log's options, the trusted proxy and the rate limits (ApplySettings).
// A change acknowledged is thus in effect for the next request, and no
// lock of the server is held around its effects.

// handleSettingsView handles GET /api/settings.
func (s *Server) handleSettingsView(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	return writeJSON(w, r, http.StatusOK, s.settings.Get().Public())
}

// handleSettingsUpdate handles PATCH /api/settings: the body is decoded over
// the current settings, and the store validates, commits and applies the
// result (maxDays 0, for one, turns request logging off and drops the
// stored logs, as PocketBase does).
func (s *Server) handleSettingsUpdate(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if err := checkJSONShape(r, b); err != nil {
		return err
	}
	var before []byte
	var logs settings.Logs // the logs section the change asks for
	edit := func(next *settings.Settings) error {
		before, _ = json.Marshal(next) // the settings this change edits
		err := decodeSettings(b, next)
		logs = next.Logs
		return err
	}
	v, err := s.settings.Update(edit)
	if errors.Is(err, journal.ErrStorageFull) && s.trimLogs(r, logs.MaxDays) {
		v, err = s.settings.Update(edit)
	}
	if data := validationData(err); data != nil {
		return errValidation("An error occurred while saving the new settings.", data)
	}
	if err != nil {
		return err
	}
	if keys := changedKeys(before, v); len(keys) > 0 {
		s.log.Info("settings changed", auditAttrs(r, "changed", keys)...)
	}
	return writeJSON(w, r, http.StatusOK, v.Public())
}

// trimLogs frees space for a settings change the full disk refused, when
// the change lowers logs.maxDays: the stored logs it would delete once
// saved are deleted first, since deleting needs no space (a full disk is
// most often full of logs, and otherwise a superuser could not lower the
// retention to make room). It reports whether anything was freed, so that
// the save is worth trying again; if that save fails too, the change is
// not saved, but those logs stay deleted.
func (s *Server) trimLogs(r *http.Request, maxDays int) bool {
	if maxDays < 0 || maxDays >= s.settings.Get().Logs.MaxDays {
		return false
	}
	freed, err := s.logs.Trim(maxDays)
	if err != nil {
		s.log.Error("settings: deleting logs to make room", "err", err)
	}
	if freed == 0 {
		return false
	}
	s.log.Info("settings: logs past the new retention deleted to make room for the change",
		auditAttrs(r, "maxDays", maxDays, "bytesFreed", freed)...)
	return true
}

// decodeSettings decodes a PATCH body over v, as PocketBase binds the
// body into a clone of the settings: keys absent from the body keep their
// values, and a rule sent with some fields keeps the others of the rule at
// its index (encoding/json decodes an array element into the element
// there). An empty body changes nothing. Only the first JSON value is read.
func decodeSettings(body []byte, v *settings.Settings) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(v); err != nil {
		return errBadRequest(msgLoadFailed, fmt.Errorf("httpapi: settings: invalid JSON: %w", err))
	}
	return nil
}

// applied is the server's part of the settings: the request log's options,
// the trusted proxy and the rate limits. ApplySettings replaces it whole on
// every committed change, and a request reads it with one atomic load, so
// it sees one version throughout.
type applied struct {
	logs    settings.Logs
	proxy   settings.TrustedProxy // Headers is the store's: read only
	limiter *rateLimiter          // nil while rate limits are disabled
}

// ApplySettings applies the server's part of v. It is the server's
// subscriber to the settings store (see settings.Store.Subscribe): it is
// called with the settings at start and then with every committed change,
// one call at a time, before the change is acknowledged. The rate limiter
// is rebuilt, with fresh counters (as PocketBase resets its limiters on a
// settings change), when the rules change; disabling rate limits forgets
// it, so that enabling them again starts afresh even with the same rules.
func (s *Server) ApplySettings(v settings.Settings) {
	a := &applied{logs: v.Logs, proxy: v.TrustedProxy}
	if v.RateLimits.Enabled {
		prev := s.applied.Load()
		if prev != nil && prev.limiter != nil && slices.Equal(prev.limiter.cfg, v.RateLimits.Rules) {
			a.limiter = prev.limiter
		} else {
			a.limiter = newRateLimiter(v.RateLimits.Rules, s.now)
		}
	}
	s.applied.Store(a)
}

// clientIP returns the client's address under the applied trusted proxy
// settings; remote is the connection's (remoteIP).
func (a *applied) clientIP(r *http.Request, remote string) string {
	return clientIP(r, remote, a.proxy.Headers, a.proxy.UseLeftmostIP)
}
