package conformance

import (
	"strings"
	"testing"
)

// TestOAuth2PrivateProviderHint: against a strongbox that refuses
// provider URLs on private addresses (its default), a sign-in through the
// suite's provider on 127.0.0.1 fails, and the failure says why it may
// have, and what strongbox needs.
func TestOAuth2PrivateProviderHint(t *testing.T) {
	base := startStrongboxWith(t, false)
	for _, id := range []string{"AUTH-OAUTH2-002", "AUTH-OAUTH2-005"} {
		rep := Run(t.Context(), Config{BaseURL: base, Email: testEmail, Password: testPassword, Only: id, Profile: SourceStrongbox})
		if len(rep.Results) != 1 {
			t.Fatalf("%s: %d results, want 1", id, len(rep.Results))
		}
		res := rep.Results[0]
		if res.Outcome != Fail || !strings.Contains(res.Detail, msgOAuth2Token) ||
			!strings.Contains(res.Detail, "strongbox needs STRONGBOX_OAUTH2_ALLOW_PRIVATE=1") {
			t.Errorf("%s: %v %s; want a failure that names the token step's 400 and STRONGBOX_OAUTH2_ALLOW_PRIVATE=1", id, res.Outcome, res.Detail)
		}
	}
}
