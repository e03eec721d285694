package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"strongbox/httpapi/app/throwaway"
)

// TestOfficialJSSDK drives a throwaway strongbox through PocketBase's
// official JavaScript SDK, the client our users point at it
// (testdata/sdk/check.mjs: sign-in, refresh, impersonation, records, logs,
// backups with download and upload, account mails, API rules (a
// rule-filtered list, an authRule refusal), a TOTP second factor through
// pb.send and pb.authStore.save, and the errors the SDK
// surfaces). It runs when STRONGBOX_JS_SDK names the SDK (its package dir,
// or its dist/pocketbase.es.mjs) and node is installed; .ci/run installs
// both:
//
//	npm install --prefix /tmp/sdk pocketbase@0.26.9
//	STRONGBOX_JS_SDK=/tmp/sdk/node_modules/pocketbase go test -run TestOfficialJSSDK -v .
func TestOfficialJSSDK(t *testing.T) {
	runSDKScript(t, "check.mjs", 18)
}

// runSDKScript runs testdata/sdk/NAME under node against a throwaway
// strongbox, and requires steps steps to report ok.
func runSDKScript(t *testing.T, name string, steps int) {
	sdk := os.Getenv("STRONGBOX_JS_SDK")
	if sdk == "" {
		t.Skip("no SDK: set STRONGBOX_JS_SDK to an installed pocketbase npm package (.ci/run installs one)")
	}
	if fi, err := os.Stat(sdk); err == nil && fi.IsDir() {
		sdk = filepath.Join(sdk, "dist", "pocketbase.es.mjs")
	}
	if _, err := os.Stat(sdk); err != nil {
		t.Fatalf("STRONGBOX_JS_SDK: %v", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("STRONGBOX_JS_SDK is set but node is not installed")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	tw, err := cli{self: "strongbox", getenv: envOf("STRONGBOX_BCRYPT_COST", "4"), stdout: io.Discard, stderr: io.Discard}.startThrowaway(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Stop()
	script, err := filepath.Abs(filepath.Join("testdata", "sdk", name))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, node, script, tw.Base, throwaway.Email, tw.Password)
	cmd.Env = append(os.Environ(), "SDK_MODULE="+sdk)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Logf("node %s:\n%s", name, out.String())
	if err != nil {
		t.Fatalf("the SDK check failed: %v", err)
	}
	// Every step reports ok: a script that stops early fails here too.
	if n := len(regexp.MustCompile(`(?m)^ok `).FindAllIndex(out.Bytes(), -1)); n != steps {
		t.Errorf("%d steps passed, want %d", n, steps)
	}
}

// TestOfficialJSSDKPasskey signs in with a passkey through the official
// JavaScript SDK (testdata/sdk/passkey.mjs): pb.send to the passkey
// routes with a software authenticator in Node (WebCrypto ECDSA P-256),
// pb.authStore.save of the answer, then authRefresh; a replay is refused.
// It runs and skips as TestOfficialJSSDK does.
func TestOfficialJSSDKPasskey(t *testing.T) {
	runSDKScript(t, "passkey.mjs", 4)
}
