package settings

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"strongbox/authn/validation"
)

// The test kit's key pair (age-keygen -y prints the recipient).
const (
	testIdentity  = "AGE-SECRET-KEY-1EGTZVFFV20835NWYV6270LXYVK2VKNX2MMDKWYKLMGR48UAWX40Q2P2LM0"
	testRecipient = "age1xmwwc06ly3ee5rytxm9mflaz2u56jjj36s0mypdrwsvlul66mv4q47ryef"
	otherRecip    = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p"
)

// TestBackupsEncryption: backups.encryption is validated (the identity
// and every recipient parsed, an identity required when enabled), its
// identity is kept by an edit that leaves it empty, never public (the
// recipient shown instead), and never in an error.
func TestBackupsEncryption(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	inv, req := validation.CodeInvalidValue, validation.CodeRequired
	for _, tt := range []struct {
		body string
		want map[string]string // field: code; nil = accepted
	}{
		{`{"enabled":true}`, map[string]string{"identity": req}},
		{`{"enabled":true,"identity":"AGE-SECRET-KEY-1NOTAKEY"}`, map[string]string{"identity": inv}},
		{`{"identity":"` + strings.ToLower(testIdentity) + `"}`, map[string]string{"identity": inv}},
		{`{"identity":"` + testIdentity + `","recipients":["age1nope"]}`, map[string]string{"recipients": inv}},
		{`{"identity":"` + testIdentity + `","recipients":["` + testIdentity + `"]}`, map[string]string{"recipients": inv}},
		{`{"enabled":false}`, nil},
		{`{"enabled":true,"identity":"` + testIdentity + `","recipients":["` + otherRecip + `"]}`, nil},
	} {
		_, err := patch(s, `{"backups":{"encryption":`+tt.body+`}}`)
		got := map[string]string{}
		if ve, ok := errors.AsType[validation.Errors](err); ok {
			b, _ := json.Marshal(ve)
			if strings.Contains(string(b), "NOTAKEY") || strings.Contains(strings.ToUpper(string(b)), testIdentity[15:]) {
				t.Errorf("patch(%s): the error repeats the identity: %s", tt.body, b)
			}
			bk, _ := ve["backups"].(validation.Errors)
			sec, _ := bk["encryption"].(validation.Errors)
			for k, v := range sec {
				got[k] = v.(*validation.Error).Code
			}
		} else if err != nil {
			t.Fatalf("patch(%s) = %v", tt.body, err)
		}
		if tt.want == nil {
			tt.want = map[string]string{}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("patch(%s) errors (-want +got):\n%s", tt.body, diff)
		}
	}
	// The dashboard sends the answer back: no identity, the recipient.
	v, err := patch(s, `{"backups":{"encryption":{"enabled":true,"identity":"","recipient":"age1forged","recipients":[]}}}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Backups.Encryption; got.Identity != testIdentity || got.Recipient != "" || !got.Enabled || len(got.Recipients) != 0 {
		t.Errorf("after an edit without the identity: %+v, want it kept, no stored recipient", got)
	}
	pub := v.Public().Backups.Encryption
	if pub.Identity != "" || pub.Recipient != testRecipient {
		t.Errorf("public encryption = %+v, want no identity, recipient %s", pub, testRecipient)
	}
	b, _ := json.Marshal(v.Public())
	if strings.Contains(string(b), testIdentity) || !strings.Contains(string(b), `"recipients":[]`) {
		t.Errorf("public settings JSON = %s", b)
	}
	id, recips := v.Backups.Encryption.Keys()
	if id == nil || len(recips) != 1 || recips[0].(interface{ String() string }).String() != testRecipient {
		t.Errorf("Keys() = %v, %v; want the identity and its own recipient", id, recips)
	}
	v, _ = patch(s, `{"backups":{"encryption":{"enabled":false}}}`)
	if id, recips := v.Backups.Encryption.Keys(); id == nil || recips != nil {
		t.Errorf("Keys() while disabled = %v, %v; want the identity (to open) and no recipients", id, recips)
	}
}
