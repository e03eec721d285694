package pbimport

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"strongbox/authn/validation"
)

// settingsSections are the sections of PocketBase's settings document
// strongbox keeps, in the order an import applies them (Settings decodes
// each into its part of strongbox's settings).
var settingsSections = []string{"meta", "smtp", "backups", "logs", "rateLimits", "trustedProxy", "batch"}

// keptSection reports whether key is one of settingsSections.
func keptSection(key string) bool { return slices.Contains(settingsSections, key) }

// settingsSkipped are the sections of PocketBase's settings strongbox has
// no use for, and why.
var settingsSkipped = map[string]string{
	"s3": "strongbox stores no files, so it has no file storage on S3",
}

// settings imports PocketBase's settings (the step "settings"): each
// section strongbox keeps is decoded over strongbox's defaults and saved
// through the settings store, which validates it; a section it refuses
// keeps the defaults and is reported, as are the keys of a section
// strongbox does not keep.
func (im *importer) settings() (err error) {
	raw, err := im.src.Settings()
	if err != nil {
		return fmt.Errorf("read the settings: %w", err)
	}
	defer func() {
		if err == nil {
			im.logMaxDays, im.logMinLevel, err = im.st.Settings.LogRetention()
		}
	}()
	if raw == nil {
		return nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("read the settings: %w", err)
	}
	for _, key := range settingsSections {
		b, ok := doc[key]
		if !ok {
			continue
		}
		if err := im.importSection(key, b); err != nil {
			return err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(doc)) {
		if keptSection(key) || (key == "s3" && !s3Enabled(doc[key])) {
			continue // an s3 section that is off loses nothing
		}
		reason, known := settingsSkipped[key]
		if !known {
			reason = "strongbox has no use for it"
		}
		im.skip("settings", q(key), reason)
	}
	return nil
}

// importSection decodes the section key (b) over the stored settings'
// and saves it; a validation failure keeps the section as it was.
func (im *importer) importSection(key string, b json.RawMessage) error {
	turnedOff := false
	if key == "smtp" && im.opts.NoMail {
		b, turnedOff = smtpOff(b)
	}
	var orig map[string]any
	if err := json.Unmarshal(b, &orig); err != nil {
		im.skip("settings", key, "not an object")
		return nil
	}
	stored, err := im.st.Settings.ImportSection(key, b)
	verrs, invalid := errors.AsType[validation.Errors](err)
	switch {
	case errors.Is(err, ErrSectionJSON):
		im.skip("settings", key, err.Error())
		return nil
	case invalid:
		im.skip("settings", key, "refused, strongbox's defaults kept: "+verrs.Error())
		return nil
	case err != nil:
		return fmt.Errorf("save the settings section %s: %w", key, err)
	}
	im.report.Settings = append(im.report.Settings, key)
	got, err := genericJSON(stored)
	if err != nil {
		return err
	}
	for _, k := range lostKeys(orig, got) {
		im.skip("setting", key+"."+quotePath(k), "strongbox does not keep it")
	}
	if key == "smtp" {
		im.report.Mail = mailState(got, turnedOff)
	}
	return nil
}

// smtpOff returns the smtp section b with enabled false, and whether it
// was on (b unchanged if it was not, or is not an object).
func smtpOff(b json.RawMessage) (json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || string(m["enabled"]) != "true" {
		return b, false
	}
	m["enabled"] = json.RawMessage("false")
	out, err := json.Marshal(m)
	if err != nil {
		return b, false
	}
	return out, true
}

// mailState is Report.Mail for the smtp section stored (got).
func mailState(got map[string]any, turnedOff bool) *MailState {
	on, _ := got["enabled"].(bool)
	if !on && !turnedOff {
		return nil
	}
	host, _ := got["host"].(string)
	port, _ := got["port"].(float64)
	return &MailState{On: on, TurnedOff: turnedOff, Host: host, Port: int(port)}
}

// s3Enabled reports whether an s3 settings section turns S3 on.
func s3Enabled(b json.RawMessage) bool {
	var s struct {
		Enabled bool `json:"enabled"`
	}
	return json.Unmarshal(b, &s) == nil && s.Enabled
}
