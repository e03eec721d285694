package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"

	"strongbox/authn/oauth2"
)

// The server's own events that the API logs (besides the request log):
// the audit trail, and the OAuth2 providers' errors. The storage's health
// is logged by noteStorage (errors.go).
//
// The audit trail: every change a superuser makes to the settings, the
// collections or the backups is logged (an info event, which the log store
// keeps beside the request logs) with the superuser's id and email and,
// for an update, the top-level keys it changed, never a value: the values
// may be secrets (smtp.password, a client secret). PocketBase keeps no
// such trail.

// auditAttrs are the attributes naming the superuser behind r.
func auditAttrs(r *http.Request, more ...any) []any {
	attrs := make([]any, 0, 4+len(more))
	if st := stateOf(r); st != nil && st.rec != nil {
		attrs = append(attrs, "superuserId", st.rec.ID, "superuserEmail", st.rec.Email)
	}
	return append(attrs, more...)
}

// changedKeys returns the top-level keys whose JSON differs between before
// and after (JSON objects of the same type), sorted, but for ignore.
func changedKeys(before, after any, ignore ...string) []string {
	b, err1 := topLevel(before)
	a, err2 := topLevel(after)
	if err1 != nil || err2 != nil {
		return []string{"?"}
	}
	keys := []string{}
	for k, v := range a {
		if w, ok := b[k]; (!ok || !bytes.Equal(v, w)) && !slices.Contains(ignore, k) {
			keys = append(keys, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !slices.Contains(ignore, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

// topLevel is v's JSON object by key.
func topLevel(v any) (map[string]json.RawMessage, error) {
	if raw, ok := v.([]byte); ok {
		var m map[string]json.RawMessage
		return m, json.Unmarshal(raw, &m)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return topLevel(raw)
}

// providerFailed logs the error of an OAuth2 exchange with the provider
// cfg names as a warning, and returns it for the request log: the
// provider's own words (authn/oauth2 keeps them short and never puts the
// request's secrets in), with the client secret cut out should a provider
// echo it back.
func (s *Server) providerFailed(cfg oauth2.Config, err error) error {
	if cfg.ClientSecret != "" && strings.Contains(err.Error(), cfg.ClientSecret) {
		err = errors.New(strings.ReplaceAll(err.Error(), cfg.ClientSecret, redactedValue))
	}
	s.log.Warn("oauth2: provider error", "provider", cfg.Name, "err", err)
	return err
}
