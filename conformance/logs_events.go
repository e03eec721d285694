package conformance

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Issue 21 asks for the server's own events in the log store, as PocketBase
// keeps its own (a failed backup, a mail that could not be sent), beside
// the request logs and told apart from them by data.type; an audit trail of
// settings changes, which PocketBase does not keep; no secret in any entry;
// and messages that cannot show a forged line. The checks cause each event
// without changing what a server holds: a restore of an archive that does
// not exist, a settings value changed and put back, a collection of the
// suite's own.

// sectionEvents is what the event checks cite.
const sectionEvents = "issue 21 (the server's own events in the log store); §2.2 level, message, data"

// eventsAbsent ends the text of the checks of what events hold.
const eventsAbsent = " On a server that keeps no events of its own (after the probe's restore of a missing archive, " +
	"no entry without data.type within the wait) it is skipped as absent, with the probe's answer."

// withEvents is loggedRequestCheck for a check of what the server's events
// hold: on a server that keeps none it is a skip, absent (LOG-EVENT-001
// is the one that fails there).
func withEvents(f func(ctx context.Context, c *Client, nonce string) error) func(context.Context, *Client) error {
	return loggedRequestCheck(func(ctx context.Context, c *Client, nonce string) error {
		if err := c.requireEvents(ctx); err != nil {
			return err
		}
		return f(ctx, c, nonce)
	})
}

// requireEvents probes, once a run, whether the server's log store keeps
// events of its own: a restore of an archive that does not exist, then any
// entry without data.type in GET /api/logs within the wait. None makes the
// check a skip, "absent", that quotes the probe.
func (c *Client) requireEvents(ctx context.Context) error {
	s := c.shared
	s.eventsMu.Lock()
	defer s.eventsMu.Unlock()
	if s.eventsDone {
		return s.eventsErr
	}
	key := "cf_" + newNonce(12) + ".zip"
	r, err := c.post(ctx, "/api/backups/"+seg(key)+"/restore", c.su, nil)
	if err != nil {
		return fmt.Errorf("probing the server's events: %w", err)
	}
	_, err = c.findEvent(ctx, "any entry without data.type", func(map[string]any) bool { return true })
	if v, ok := errors.AsType[*verdict](err); err != nil && (!ok || v.outcome != Fail) {
		return fmt.Errorf("probing the server's events: %w", err)
	}
	s.eventsDone = true
	if err != nil {
		answer := strconv.Itoa(r.status)
		if msg := r.exchange().Message; msg != "" {
			answer += " " + strconv.Quote(msg)
		}
		s.eventsErr = Skipf("absent: the server keeps no events of its own (probe: POST /api/backups/%s/restore "+
			"answered %s, and GET /api/logs listed no entry without data.type within %s)", key, answer, c.opts.wait)
	}
	return s.eventsErr
}

var logEventRequirements = []*Requirement{
	{
		ID:      "LOG-EVENT-001",
		Source:  SourceStrongbox,
		Section: sectionEvents,
		Name:    "a failed backup operation leaves an event",
		Text: "Beyond the document and PocketBase's request log: POST /api/backups/cf_<random>.zip/restore of an " +
			"archive that does not exist answers 400, and within 10 s GET /api/logs lists an entry with level 4 or " +
			"more, no data.type, and the archive's name in its data.",
		Run: loggedRequestCheck(checkFailedBackupEvent),
	},
	{
		ID:      "LOG-EVENT-002",
		Source:  SourceStrongbox,
		Section: sectionEvents + "; issue 21 (an audit trail PocketBase does not keep)",
		Name:    "a settings change leaves an audit entry",
		Text: "PATCH /api/settings changing batch.timeout (put back afterwards) answers 200, and within 10 s GET " +
			"/api/logs lists an entry with no data.type whose data names the superuser by email and the top-level " +
			"key batch as changed." + eventsAbsent,
		Run: withEvents(checkSettingsAudit),
	},
	{
		ID:      "LOG-EVENT-003",
		Source:  SourceStrongbox,
		Section: sectionEvents + "; issue 21 (never a secret in any entry)",
		Name:    "no entry holds a client secret",
		Text: "With the suite's OAuth2 provider configured (with a clientSecret the suite generates) on an auth " +
			"collection of its own and an auth-with-oauth2 the provider refuses, GET /api/logs lists within 10 s " +
			"an entry with no data.type naming the collection, and none of the 500 newest entries holds the " +
			"clientSecret anywhere." + eventsAbsent,
		Run: withEvents(checkNoSecretInEvents),
	},
	{
		ID:      "LOG-TEXT-001",
		Source:  SourceStrongbox,
		Section: "issue 21 (log text that cannot fool a reader); §2.2 message",
		Name:    "a CR LF in the URL is not a line break in the message",
		Text: "GET /api/cf-<random>%0d%0aX:%20y?cf=… (answered 404) is logged within 10 s with a message that holds " +
			"no CR, no LF and no other control character, so that a plain-text view of the logs cannot be made " +
			"to show a forged line. PocketBase stores the CR LF itself and fails this.",
		Run: loggedRequestCheck(checkCRLFMessage),
	},
}

// findEvent polls GET /api/logs (the entries without data.type first,
// then the newest of all) for an entry with no data.type that match
// accepts.
func (c *Client) findEvent(ctx context.Context, what string, match func(e map[string]any) bool) (map[string]any, error) {
	var found map[string]any
	ok, err := c.pollLogs(ctx, []url.Values{
		{"filter": {`data.type != "request"`}, "sort": {"-created"}, "perPage": {"200"}},
		{"sort": {"-created"}, "perPage": {"500"}},
	}, func(items []map[string]any) bool {
		for _, it := range items {
			data, _ := getObject(it, "data")
			if _, typed := data["type"]; !typed && match(it) {
				found = it
				return true
			}
		}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("listing logs to find %s: %w", what, err)
	}
	if !ok {
		return nil, Mismatch(fmt.Sprintf("%s in GET /api/logs within %s", what, c.opts.wait), "no such entry")
	}
	return found, nil
}

// holds reports whether a string in v equals s.
func holds(v any, s string) bool {
	for _, at := range sortedStrings(v) {
		if at.value == s {
			return true
		}
	}
	return false
}

func checkFailedBackupEvent(ctx context.Context, c *Client, _ string) error {
	key := "cf_" + newNonce(12) + ".zip"
	r, err := c.post(ctx, "/api/backups/"+seg(key)+"/restore", c.su, nil)
	if err != nil {
		return err
	}
	if r.status != http.StatusBadRequest {
		return Mismatch("POST /api/backups/"+key+"/restore of a missing archive answered 400", r.String())
	}
	_, err = c.findEvent(ctx, "an entry of level 4 or more naming "+key, func(e map[string]any) bool {
		level, _ := getNumber(e, "level")
		data, _ := getObject(e, "data")
		return level >= 4 && strings.Contains(jsonText(data), key)
	})
	return err
}

func checkSettingsAudit(ctx context.Context, c *Client, _ string) error {
	s, err := c.readSettings(ctx)
	if err != nil {
		return err
	}
	batch, ok := getObject(s.all, "batch")
	if !ok {
		return Skipf("GET /api/settings shows no batch object")
	}
	timeout, ok := getNumber(batch, "timeout")
	if !ok {
		return Skipf("GET /api/settings shows no batch.timeout number")
	}
	c.restoreSettingOnCleanup("batch", batch)
	changed := maps.Clone(batch)
	changed["timeout"] = timeout + 1
	if err := c.patchSettings(ctx, map[string]any{"batch": changed}); err != nil {
		return err
	}
	_, err = c.findEvent(ctx, "an audit entry naming "+c.email+" and the key batch", func(e map[string]any) bool {
		data, _ := getObject(e, "data")
		return holds(data, c.email) && holds(data, "batch")
	})
	return err
}

func checkNoSecretInEvents(ctx context.Context, c *Client, _ string) error {
	coll, err := c.newCollection(ctx, "auth")
	if err != nil {
		return err
	}
	p, orig, err := c.oauth2Setup(ctx, coll)
	if err != nil {
		return err
	}
	r, err := c.patchOAuth2(ctx, coll, p, orig, true)
	if err != nil {
		return err
	}
	if r.status != http.StatusOK {
		return Skipf("the server refused the suite's OAuth2 provider on %s: %s", coll, r)
	}
	if _, err := c.authWithOAuth2(ctx, coll, map[string]any{"provider": "oidc", "code": "cf-code-" + newNonce(8),
		"codeVerifier": newNonce(43), "redirectURL": c.base + "/api/oauth2-redirect"}); err != nil {
		return err
	}
	if _, err := c.findEvent(ctx, "an entry naming the collection "+coll, func(e map[string]any) bool {
		return strings.Contains(jsonText(e["data"]), coll)
	}); err != nil {
		return err
	}
	r, err = c.get(ctx, "/api/logs?sort=-created&perPage=500", c.su)
	if err != nil {
		return err
	}
	list, err := parseLogList(r)
	if err != nil {
		return err
	}
	for _, e := range list.items {
		if err := expectNoSecrets(e, map[string]string{"the clientSecret": p.clientSecret}); err != nil {
			return fmt.Errorf("entry %v: %w", e["id"], err)
		}
	}
	return nil
}

func checkCRLFMessage(ctx context.Context, c *Client, nonce string) error {
	path := "/api/cf-" + newNonce(8) + "%0d%0aX:%20y?cf=" + nonce
	r, err := c.get(ctx, path, "")
	if err != nil {
		return err
	}
	if r.status != http.StatusNotFound {
		return Mismatch("GET "+path+" answered 404", r.String())
	}
	entry, err := c.waitForLogged(ctx, nonce)
	if err != nil {
		return err
	}
	msg, _ := getString(entry, "message")
	if strings.ContainsFunc(msg, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return Mismatch("a message without control characters", fmt.Sprintf("%q", msg))
	}
	return nil
}
