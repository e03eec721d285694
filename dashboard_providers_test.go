package main

import (
	"encoding/json"
	"os/exec"
	"slices"
	"testing"

	"strongbox/authn"
	"strongbox/authn/oauth2"
)

// TestDashboardProviderPresets: the dashboard's OAuth2 presets
// (httpapi/dashboard/ui/providers.js, read by Node) are the server's: the
// names a collection may configure (authn.ProviderNames), each with the
// display name and PKCE default of its preset in package authn/oauth2, and
// a kind (the form then asks for the URLs) exactly when the preset has no
// endpoints of its own. It skips when node is not installed.
func TestDashboardProviderPresets(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	out, err := exec.CommandContext(t.Context(), node, "--input-type=module", "-e",
		`import { presets } from './httpapi/dashboard/ui/providers.js'; console.log(JSON.stringify(presets));`).Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var presets []struct {
		Name, DisplayName, Kind string
		PKCE                    bool
	}
	if err := json.Unmarshal(out, &presets); err != nil {
		t.Fatalf("the presets of providers.js: %v (%s)", err, out)
	}
	var names []string
	for _, p := range presets {
		names = append(names, p.Name)
		want, ok := oauth2.Preset(p.Name)
		if !ok {
			t.Errorf("providers.js has %q, which the server has no preset for", p.Name)
			continue
		}
		if p.DisplayName != want.DisplayName || p.PKCE != want.PKCE {
			t.Errorf("providers.js: %s is %q with PKCE %v, the server's preset %q with PKCE %v", p.Name, p.DisplayName, p.PKCE, want.DisplayName, want.PKCE)
		}
		if (p.Kind != "") != (want.AuthURL == "") {
			t.Errorf("providers.js: %s has kind %q, but the server's preset has the auth URL %q", p.Name, p.Kind, want.AuthURL)
		}
	}
	if !slices.Equal(names, authn.ProviderNames) {
		t.Errorf("providers.js names %v, the server accepts %v", names, authn.ProviderNames)
	}
}
