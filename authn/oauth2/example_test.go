package oauth2_test

import (
	"fmt"
	"strings"

	"strongbox/authn/oauth2"
)

// The auth-methods entry of a provider: the collection's config resolved
// with the preset, a fresh state and PKCE pair, and the authorization URL
// that ends with `&redirect_uri=` for the client to complete.
func ExampleAuthURL() {
	cfg := oauth2.Resolve(oauth2.Config{Name: "gitlab", ClientID: "my-app"})
	r := strings.NewReader(strings.Repeat("strongbox", 20)) // crypto/rand in real use
	state, _ := oauth2.NewState(r)
	_, challenge, _ := oauth2.NewPKCE(r)
	fmt.Println(cfg.DisplayName, cfg.PKCE)
	fmt.Println(oauth2.AuthURL(cfg, state, challenge, ""))
	// Output:
	// GitLab true
	// https://gitlab.com/oauth/authorize?client_id=my-app&code_challenge=6PYsYWb5_j91dDY7cuK-Hlp6Od9esBRLhpE8oFgrSeg&code_challenge_method=S256&response_type=code&scope=read_user&state=120xwpkx6120xwpkx6120xwpkx6120&redirect_uri=
}
