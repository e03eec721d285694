package conformance

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
)

// Passkeys (issue 34): strongbox's own, PocketBase has none. The checks
// turn passkey.enabled on for users, make sure meta.appURL names a domain
// (the relying party is its host), and play the browser and the
// authenticator with a software authenticator of the suite's own: an
// ES256 key of crypto/ecdsa, attestation "none", the WebAuthn Level 3
// JSON forms with unpadded base64url.

const (
	sectionPasskey = "issue 34 (passkeys: WebAuthn Level 3 JSON forms; the relying party is the host of meta.appURL)"

	msgPasskeyChallenge = "Invalid or expired passkey challenge."
	msgPasskeyInvalid   = "Invalid passkey."

	// passkeyEvilOrigin is the origin of the wrong-origin check.
	passkeyEvilOrigin = "https://cf-evil.example.com"
	// passkeyAppURL is the app URL the checks set when the server's names
	// no domain.
	passkeyAppURL = "https://cf-passkey.example.com"
	// passkeyNobody starts the identities no account has.
	passkeyNobody = "cf-nobody-"
)

var passkeyRequirements = []*Requirement{
	{
		ID: "PSK-001", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "register options and registration",
		Text: "With passkey.enabled on users, POST passkeys/register/options with a user's token answers 200 with " +
			"{challengeId, publicKey}: publicKey.rp.id the host of meta.appURL, a challenge of at least 16 bytes, user.id " +
			"the record id (base64url), ES256 (-7) among pubKeyCredParams; POST passkeys/register with the challengeId, " +
			"the authenticator's RegistrationResponseJSON and a name answers 200 with exactly {id, name, created}.",
		Run: withPasskeyUser(func(ctx context.Context, c *Client, p *passkeyUser) error {
			_, err := c.registerPasskey(ctx, p)
			return err
		}),
	},
	{
		ID: "PSK-002", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "the record's passkeys are listed",
		Text: "After a registration, GET passkeys with the user's token answers 200 with a JSON array holding an " +
			"object with the passkey's id and name.",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			return c.expectPasskeyListed(ctx, p, k, true)
		}),
	},
	{
		ID: "PSK-003", Source: SourceStrongbox, Section: sectionPasskey + "; §2.6",
		Name: "usernameless sign-in with a passkey",
		Text: "POST auth-with-passkey/options with {} answers 200 with {challengeId, publicKey}: publicKey.rpId the " +
			"relying party, allowCredentials empty; POST auth-with-passkey with the challengeId and the authenticator's " +
			"AuthenticationResponseJSON answers 200 with the §2.6 result of the user.",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			r, _, err := c.passkeySignIn(ctx, p, k, nil)
			if err != nil {
				return err
			}
			return checkAuthResult(r, "users", p.u.id, p.u.email)
		}),
	},
	{
		ID: "PSK-004", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "a challenge answers one sign-in",
		Text: "The same auth-with-passkey request sent again after it signed in answers 400 \"" + msgPasskeyChallenge + "\".",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			r, body, err := c.passkeySignIn(ctx, p, k, nil)
			if err != nil {
				return err
			}
			if err := expectStatus(r, http.StatusOK); err != nil {
				return err
			}
			if r, err = c.post(ctx, "/api/collections/users/auth-with-passkey", "", body); err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgPasskeyChallenge)
		}),
	},
	{
		ID: "PSK-005", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "a tampered signature is refused",
		Text: "auth-with-passkey with a signature that does not verify answers 400 \"" + msgPasskeyInvalid + "\".",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			r, _, err := c.passkeySignIn(ctx, p, k, func(k *softKey) { k.tamper = true })
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgPasskeyInvalid)
		}),
	},
	{
		ID: "PSK-006", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "client data of another origin is refused",
		Text: "auth-with-passkey signed for the origin " + passkeyEvilOrigin + " (not the app URL's) answers 400 \"" + msgPasskeyInvalid + "\".",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			r, _, err := c.passkeySignIn(ctx, p, k, func(k *softKey) { k.origin = passkeyEvilOrigin })
			if err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgPasskeyInvalid)
		}),
	},
	{
		ID: "PSK-007", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "a deleted passkey no longer signs in",
		Text: "DELETE passkeys/{id} with the user's token answers 204; GET passkeys no longer lists it, and a sign-in " +
			"with it answers 400 \"" + msgPasskeyInvalid + "\".",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			r, err := c.do(ctx, http.MethodDelete, "/api/collections/users/passkeys/"+url.PathEscape(k.id), p.token, nil)
			if err != nil {
				return err
			}
			if err := expectStatus(r, http.StatusNoContent); err != nil {
				return err
			}
			if err := c.expectPasskeyListed(ctx, p, k, false); err != nil {
				return err
			}
			if r, _, err = c.passkeySignIn(ctx, p, k, nil); err != nil {
				return err
			}
			return expectErrorEmptyData(r, http.StatusBadRequest, msgPasskeyInvalid)
		}),
	},
	{
		ID: "PSK-008", Source: SourceStrongbox, Section: sectionPasskey,
		Name: "sign-in options do not tell who has an account",
		Text: "auth-with-passkey/options with the identity of a user with a passkey and with an email no account has " +
			"both answer 200 with publicKey of the same keys and one allowCredentials entry each, of the same keys; " +
			"the unknown one the same entry at every request.",
		Run: withPasskey(func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error {
			known, err := c.passkeyOptions(ctx, p.u.email)
			if err != nil {
				return err
			}
			nobody := passkeyNobody + newNonce(10) + "@example.com"
			unknown, err := c.passkeyOptions(ctx, nobody)
			if err != nil {
				return err
			}
			again, err := c.passkeyOptions(ctx, nobody)
			if err != nil {
				return err
			}
			shape := func(o map[string]any) string {
				allow, _ := o["allowCredentials"].([]any)
				keys := []string{}
				if len(allow) == 1 {
					if m, ok := allow[0].(map[string]any); ok {
						keys = sortedKeys(m)
					}
				}
				return fmt.Sprintf("keys %v, %d allowCredentials with keys %v", sortedKeys(o), len(allow), keys)
			}
			if shape(unknown) != shape(known) || !strings.Contains(shape(known), " 1 allowCredentials") {
				return Mismatch("for an unknown identity an answer of the known one's shape: "+shape(known), shape(unknown))
			}
			if !reflect.DeepEqual(unknown["allowCredentials"], again["allowCredentials"]) {
				return Mismatch("the same allowCredentials again "+jsonText(unknown["allowCredentials"]), jsonText(again["allowCredentials"]))
			}
			return nil
		}),
	},
}

func sortedKeys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// passkeyUser is a user of users with passkeys on, signed in, and the
// relying party the server answers for.
type passkeyUser struct {
	u      *user
	token  string
	rpID   string
	origin string
}

// withPasskeyUser turns passkey.enabled on for users (and gives meta.appURL
// a domain when it has none), both put back afterwards, creates a user
// signed in, and runs f.
func withPasskeyUser(f func(ctx context.Context, c *Client, p *passkeyUser) error) func(context.Context, *Client) error {
	return func(ctx context.Context, c *Client) error {
		rpID, origin, err := c.passkeyRelyingParty(ctx)
		if err != nil {
			return err
		}
		const path = "/api/collections/users"
		r, m, err := c.getOK(ctx, path, c.su)
		if err != nil {
			return err
		}
		orig, ok := getObject(m, "passkey")
		if !ok {
			return Skipf("GET %s shows no passkey object, so the suite cannot turn passkeys on: %s", path, r)
		}
		c.Cleanup("restore the passkey options of users", func(ctx context.Context) error {
			return c.patchOK(ctx, path, map[string]any{"passkey": orig})
		})
		on := maps.Clone(orig)
		on["enabled"] = true
		if err := c.patchOK(ctx, path, map[string]any{"passkey": on}); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		u, tok, err := c.newUserToken(ctx)
		if err != nil {
			return err
		}
		return f(ctx, c, &passkeyUser{u: u, token: tok, rpID: rpID, origin: origin})
	}
}

// withPasskey is withPasskeyUser with a passkey registered for the user.
func withPasskey(f func(ctx context.Context, c *Client, p *passkeyUser, k *softKey) error) func(context.Context, *Client) error {
	return withPasskeyUser(func(ctx context.Context, c *Client, p *passkeyUser) error {
		k, err := c.registerPasskey(ctx, p)
		if err != nil {
			return fmt.Errorf("fixture: register a passkey: %w", err)
		}
		return f(ctx, c, p, k)
	})
}

// passkeyRelyingParty returns the RP ID and origin of meta.appURL, after
// setting it to passkeyAppURL (put back afterwards) when it names no
// domain.
func (c *Client) passkeyRelyingParty(ctx context.Context) (string, string, error) {
	st, err := c.readSettings(ctx)
	if err != nil {
		return "", "", err
	}
	meta, _ := getObject(st.all, "meta")
	appURL, _ := getString(meta, "appURL")
	u, err := url.Parse(appURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || net.ParseIP(u.Hostname()) != nil {
		c.restoreSettingOnCleanup("meta", meta)
		patched := maps.Clone(meta)
		patched["appURL"] = passkeyAppURL
		if err := c.patchSettings(ctx, map[string]any{"meta": patched}); err != nil {
			return "", "", err
		}
		u, _ = url.Parse(passkeyAppURL)
	}
	origin := u.Scheme + "://" + strings.ToLower(u.Hostname())
	if p := u.Port(); p != "" && !(u.Scheme == "https" && p == "443") && !(u.Scheme == "http" && p == "80") {
		origin += ":" + p
	}
	return strings.ToLower(u.Hostname()), origin, nil
}

// ceremony decodes the answer of an options route: 200 with
// {challengeId, publicKey}, the challenge unpadded base64url of at least
// 16 bytes.
func ceremony(r *response) (string, map[string]any, []byte, error) {
	m, err := okObject(r)
	if err != nil {
		return "", nil, nil, err
	}
	id, _ := getString(m, "challengeId")
	pk, ok := getObject(m, "publicKey")
	chs, _ := getString(pk, "challenge")
	ch, err := base64.RawURLEncoding.DecodeString(chs)
	if id == "" || !ok || err != nil || len(ch) < 16 {
		return "", nil, nil, Mismatch("{challengeId, publicKey} with a challenge of at least 16 bytes in unpadded base64url", r.String())
	}
	return id, pk, ch, nil
}

// registerPasskey runs a registration for p with a new software
// authenticator and checks what PSK-001 states.
func (c *Client) registerPasskey(ctx context.Context, p *passkeyUser) (*softKey, error) {
	r, err := c.post(ctx, "/api/collections/users/passkeys/register/options", p.token, map[string]any{})
	if err != nil {
		return nil, err
	}
	id, pk, ch, err := ceremony(r)
	if err != nil {
		return nil, err
	}
	rp, _ := getObject(pk, "rp")
	user, _ := getObject(pk, "user")
	rpID, _ := getString(rp, "id")
	uid, _ := getString(user, "id")
	es256 := false
	params, _ := pk["pubKeyCredParams"].([]any)
	for _, x := range params {
		if m, ok := x.(map[string]any); ok && m["alg"] == float64(-7) && m["type"] == "public-key" {
			es256 = true
		}
	}
	if rpID != p.rpID || uid != base64.RawURLEncoding.EncodeToString([]byte(p.u.id)) || !es256 {
		return nil, Mismatch(fmt.Sprintf("publicKey with rp.id %q, user.id the record id %s in base64url and ES256 offered", p.rpID, p.u.id), r.String())
	}
	k, err := newSoftKey(p.rpID, p.origin, []byte(p.u.id))
	if err != nil {
		return nil, err
	}
	name := "cf-key-" + newNonce(6)
	r, err = c.post(ctx, "/api/collections/users/passkeys/register", p.token, map[string]any{
		"challengeId": id, "name": name, "credential": k.register(ch),
	})
	if err != nil {
		return nil, err
	}
	m, err := okObject(r)
	if err != nil {
		return nil, err
	}
	keys, _ := objectKeys(r.body)
	k.id, _ = getString(m, "id")
	if !sameKeys(slices.Sorted(slices.Values(keys)), "created", "id", "name") || k.id == "" || m["name"] != name {
		return nil, Mismatch(fmt.Sprintf("exactly {id, name %q, created}", name), r.String())
	}
	k.name = name
	return k, nil
}

// expectPasskeyListed requires GET passkeys to list k (or not, listed
// false).
func (c *Client) expectPasskeyListed(ctx context.Context, p *passkeyUser, k *softKey, listed bool) error {
	r, err := c.get(ctx, "/api/collections/users/passkeys", p.token)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusOK); err != nil {
		return err
	}
	list, err := array(r)
	if err != nil {
		return err
	}
	found := false
	for _, x := range list {
		if m, ok := x.(map[string]any); ok && m["id"] == k.id && m["name"] == k.name {
			found = true
		}
	}
	if found != listed {
		want := fmt.Sprintf("an array with {id %q, name %q}", k.id, k.name)
		if !listed {
			want = fmt.Sprintf("an array without the passkey %q", k.id)
		}
		return Mismatch(want, r.String())
	}
	return nil
}

// passkeyOptions asks for sign-in options for identity ("" for none)
// and returns publicKey.
func (c *Client) passkeyOptions(ctx context.Context, identity string) (map[string]any, error) {
	body := map[string]any{}
	if identity != "" {
		body["identity"] = identity
	}
	r, err := c.post(ctx, "/api/collections/users/auth-with-passkey/options", "", body)
	if err != nil {
		return nil, err
	}
	_, pk, _, err := ceremony(r)
	return pk, err
}

// passkeySignIn signs in usernameless with k, spoiled by spoil for this
// assertion only, and returns the answer and the body sent.
func (c *Client) passkeySignIn(ctx context.Context, p *passkeyUser, k *softKey, spoil func(*softKey)) (*response, map[string]any, error) {
	r, err := c.post(ctx, "/api/collections/users/auth-with-passkey/options", "", map[string]any{})
	if err != nil {
		return nil, nil, err
	}
	id, pk, ch, err := ceremony(r)
	if err != nil {
		return nil, nil, err
	}
	allow, _ := pk["allowCredentials"].([]any)
	if rpID, _ := getString(pk, "rpId"); rpID != p.rpID || len(allow) != 0 {
		return nil, nil, Mismatch(fmt.Sprintf("publicKey with rpId %q and no allowCredentials", p.rpID), r.String())
	}
	k2 := *k
	if spoil != nil {
		spoil(&k2)
	}
	body := map[string]any{"challengeId": id, "credential": k2.assert(ch)}
	k.counter = k2.counter
	r, err = c.post(ctx, "/api/collections/users/auth-with-passkey", "", body)
	return r, body, err
}

// softKey is the suite's software authenticator: one ES256 credential.
type softKey struct {
	priv         *ecdsa.PrivateKey
	credID       []byte
	handle       []byte
	rpID, origin string
	counter      uint32
	tamper       bool
	id, name     string // the server's id and the name given
}

func newSoftKey(rpID, origin string, handle []byte) (*softKey, error) {
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 32)
	rand.Read(id)
	return &softKey{priv: priv, credID: id, handle: handle, rpID: rpID, origin: origin}, nil
}

func b64u(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (k *softKey) clientData(typ string, ch []byte) []byte {
	b, _ := json.Marshal(map[string]any{"type": typ, "challenge": b64u(ch), "origin": k.origin, "crossOrigin": false})
	return b
}

// authData is the authenticator data: the RP ID hash, UP and UV, the
// counter and, for a registration, the attested credential data.
func (k *softKey) authData(attested bool) []byte {
	h := sha256.Sum256([]byte(k.rpID))
	flags := byte(0x01 | 0x04)
	if attested {
		flags |= 0x40
	}
	b := binary.BigEndian.AppendUint32(append(h[:], flags), k.counter)
	if attested {
		b = append(b, make([]byte, 16)...)
		b = binary.BigEndian.AppendUint16(b, uint16(len(k.credID)))
		b = append(b, k.credID...)
		x, y := k.priv.X.FillBytes(make([]byte, 32)), k.priv.Y.FillBytes(make([]byte, 32))
		b = append(b, cborMap(1, 2, 3, -7, -1, 1, -2, x, -3, y)...)
	}
	return b
}

func (k *softKey) credential(resp map[string]any) map[string]any {
	return map[string]any{"id": b64u(k.credID), "rawId": b64u(k.credID), "type": "public-key", "response": resp,
		"authenticatorAttachment": "platform", "clientExtensionResults": map[string]any{}}
}

// register answers a registration challenge (attestation "none").
func (k *softKey) register(ch []byte) map[string]any {
	att := cborMap("fmt", "none", "attStmt", cborMap(), "authData", k.authData(true))
	return k.credential(map[string]any{"clientDataJSON": b64u(k.clientData("webauthn.create", ch)),
		"attestationObject": b64u(att), "transports": []string{"internal"}})
}

// assert answers a sign-in challenge, the counter one more.
func (k *softKey) assert(ch []byte) map[string]any {
	k.counter++
	cd, ad := k.clientData("webauthn.get", ch), k.authData(false)
	h := sha256.Sum256(cd)
	digest := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, _ := ecdsa.SignASN1(rand.Reader, k.priv, digest[:])
	if k.tamper {
		sig[len(sig)-1] ^= 1
	}
	return k.credential(map[string]any{"clientDataJSON": b64u(cd), "authenticatorData": b64u(ad),
		"signature": b64u(sig), "userHandle": b64u(k.handle)})
}

// cborRaw is CBOR already encoded.
type cborRaw []byte

// cborMap encodes a CBOR map (RFC 8949) of alternating keys and values:
// ints, strings, byte strings and nested maps.
func cborMap(kv ...any) cborRaw {
	b := cborHead(5, uint64(len(kv)/2))
	for _, x := range kv {
		switch v := x.(type) {
		case int:
			if v < 0 {
				b = append(b, cborHead(1, uint64(-1-v))...)
			} else {
				b = append(b, cborHead(0, uint64(v))...)
			}
		case string:
			b = append(append(b, cborHead(3, uint64(len(v)))...), v...)
		case []byte:
			b = append(append(b, cborHead(2, uint64(len(v)))...), v...)
		case cborRaw:
			b = append(b, v...)
		}
	}
	return b
}

func cborHead(major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return []byte{m | byte(n)}
	case n <= 0xff:
		return []byte{m | 24, byte(n)}
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16([]byte{m | 25}, uint16(n))
	}
	return binary.BigEndian.AppendUint32([]byte{m | 26}, uint32(n))
}
