package oauth2_test

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"strongbox/authn"
	"strongbox/authn/oauth2"
	"strongbox/conformance/oauth2provider"
)

// presetCase is one exchange with a preset against presetAPI: the
// provider's answers in its own shape, what the client must send, and the
// User it must map.
type presetCase struct {
	name     string
	provider string
	token    map[string]any // more fields of the token answer
	idToken  map[string]any // claims of a signed id_token (apple, oidc): no user-info call
	user     string         // the user-info answer
	// header and body the user-info request must carry (a body makes it a
	// POST).
	header map[string]string
	body   string
	// emailsPath and emails: the emails API's path and answer; the client
	// must call it (and nothing else) when emailsPath is set.
	emailsPath, emails string
	want               oauth2.User // without tokens, expiry and Raw
	rawKey             string      // a key Raw must hold, when set
	err                string      // the wanted ErrUser, when set
}

// Facts of PocketBase v0.31.0's providers the table checks on the wire.
var (
	// noPKCE are the providers that send no code_verifier by default.
	noPKCE = []string{"bitbucket", "linear", "vk"}
	// bodyAuth are the token endpoints that get the credentials in the
	// body at once, not HTTP Basic.
	bodyAuth = []string{"apple", "box", "instagram2", "strava", "twitch", "vk"}
)

var presetCases = []presetCase{
	{name: "google", provider: "google", user: `{"sub":"g1","name":"Ada L","picture":"https://img.test/g.png","email":"ada@example.com","email_verified":true}`,
		want: oauth2.User{ID: "g1", Name: "Ada L", AvatarURL: "https://img.test/g.png", Email: "ada@example.com", EmailVerified: true}},
	{name: "google unverified", provider: "google", user: `{"sub":"g2","email":"eve@example.com","email_verified":false}`,
		want: oauth2.User{ID: "g2"}},
	{name: "github", provider: "github", user: `{"id":12345678901,"login":"octo","name":"Octo Cat","email":"octo@example.com","avatar_url":"https://img.test/o.png"}`,
		want: oauth2.User{ID: "12345678901", Name: "Octo Cat", Username: "octo", Email: "octo@example.com", EmailVerified: true, AvatarURL: "https://img.test/o.png"}},
	{name: "github emails API", provider: "github", user: `{"id":2,"login":"priv","email":null}`,
		emailsPath: "/user/emails", emails: `[{"email":"old@example.com","primary":false,"verified":true},{"email":"main@example.com","primary":true,"verified":true}]`,
		want: oauth2.User{ID: "2", Username: "priv", Email: "main@example.com", EmailVerified: true}},
	{name: "github emails API unverified", provider: "github", user: `{"id":3,"login":"unv"}`,
		emailsPath: "/user/emails", emails: `[{"email":"unv@example.com","primary":true,"verified":false}]`,
		want: oauth2.User{ID: "3", Username: "unv"}},
	{name: "gitlab", provider: "gitlab", user: `{"id":42,"username":"gl","name":"Git Lab","email":"gl@example.com","avatar_url":"https://img.test/gl.png","state":"active"}`,
		want: oauth2.User{ID: "42", Name: "Git Lab", Username: "gl", Email: "gl@example.com", EmailVerified: true, AvatarURL: "https://img.test/gl.png"}},
	// Microsoft's mail is never verified; the mapping keeps it, marked
	// unverified, as before.
	{name: "microsoft", provider: "microsoft", user: `{"id":"8f2c-11","displayName":"Mic Soft","mail":"ms@example.com"}`,
		want: oauth2.User{ID: "8f2c-11", Name: "Mic Soft", Email: "ms@example.com"}},
	{name: "discord", provider: "discord", user: `{"id":"80351110224678912","username":"nelly","global_name":"Nelly","avatar":"8342729096ea3675442027381ff50dfe","email":"nelly@example.com","verified":true}`,
		want: oauth2.User{ID: "80351110224678912", Name: "Nelly", Username: "nelly", Email: "nelly@example.com", EmailVerified: true, AvatarURL: "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png"}},
	{name: "discord unverified", provider: "discord", user: `{"id":"9","username":"x","email":"x@example.com","verified":false}`,
		want: oauth2.User{ID: "9", Name: "x", Username: "x"}},
	{name: "apple", provider: "apple", idToken: map[string]any{"sub": "001.abc", "email": "a@privaterelay.appleid.com", "email_verified": "true"},
		want: oauth2.User{ID: "001.abc", Email: "a@privaterelay.appleid.com", EmailVerified: true}},
	{name: "apple unverified", provider: "apple", idToken: map[string]any{"sub": "001.def", "email": "b@example.com", "email_verified": "false"},
		want: oauth2.User{ID: "001.def"}},
	{name: "oidc", provider: "oidc", user: `{"sub":"u1","name":"O I","preferred_username":"oi","picture":"https://img.test/oi.png","email":"oi@example.com","email_verified":true}`,
		want: oauth2.User{ID: "u1", Name: "O I", Username: "oi", AvatarURL: "https://img.test/oi.png", Email: "oi@example.com", EmailVerified: true}},
	{name: "oidc2", provider: "oidc2", idToken: map[string]any{"sub": "u2", "preferred_username": "two", "email": "two@example.com", "email_verified": true},
		want: oauth2.User{ID: "u2", Username: "two", Email: "two@example.com", EmailVerified: true}},
	{name: "oidc3 unverified", provider: "oidc3", user: `{"sub":"u3","email":"three@example.com"}`,
		want: oauth2.User{ID: "u3"}},
	{name: "bitbucket", provider: "bitbucket", user: `{"uuid":"{b1}","username":"bb","display_name":"Bit Bucket","account_status":"active","links":{"avatar":{"href":"https://img.test/bb.png"}}}`,
		emailsPath: "/2.0/user/emails", emails: `{"values":[{"email":"old@example.com","is_primary":false,"is_confirmed":true},{"email":"bb@example.com","is_primary":true,"is_confirmed":true}]}`,
		want: oauth2.User{ID: "{b1}", Name: "Bit Bucket", Username: "bb", Email: "bb@example.com", EmailVerified: true, AvatarURL: "https://img.test/bb.png"}},
	{name: "bitbucket unconfirmed", provider: "bitbucket", user: `{"uuid":"{b2}","username":"bb2","account_status":"active"}`,
		emailsPath: "/2.0/user/emails", emails: `{"values":[{"email":"bb2@example.com","is_primary":true,"is_confirmed":false}]}`,
		want: oauth2.User{ID: "{b2}", Username: "bb2"}},
	{name: "bitbucket inactive", provider: "bitbucket", user: `{"uuid":"{b3}","account_status":"closed"}`, err: "not active"},
	{name: "box", provider: "box", user: `{"id":"11446498","type":"user","name":"Aaron Box","login":"ceo@example.com","status":"active","avatar_url":"https://img.test/box.png"}`,
		want: oauth2.User{ID: "11446498", Name: "Aaron Box", AvatarURL: "https://img.test/box.png"}},
	{name: "box inactive", provider: "box", user: `{"id":"2","status":"inactive"}`, err: "not active"},
	{name: "facebook", provider: "facebook", user: `{"id":"10","name":"Face Book","email":"fb@example.com","picture":{"data":{"url":"https://img.test/fb.jpg","height":200}}}`,
		want: oauth2.User{ID: "10", Name: "Face Book", AvatarURL: "https://img.test/fb.jpg"}},
	{name: "gitea", provider: "gitea", user: `{"id":7,"login":"tea","full_name":"Gi Tea","email":"tea@example.com","avatar_url":"https://img.test/tea.png"}`,
		emailsPath: "/api/v1/user/emails", emails: `[{"email":"tea@example.com","verified":true,"primary":true}]`,
		want: oauth2.User{ID: "7", Name: "Gi Tea", Username: "tea", Email: "tea@example.com", EmailVerified: true, AvatarURL: "https://img.test/tea.png"}},
	{name: "gitea unverified", provider: "gitea", user: `{"id":8,"login":"tea2","email":"tea2@example.com"}`,
		emailsPath: "/api/v1/user/emails", emails: `[{"email":"tea2@example.com","verified":false,"primary":true}]`,
		want: oauth2.User{ID: "8", Username: "tea2"}},
	{name: "gitee", provider: "gitee", user: `{"id":9,"login":"gee","name":"Gi Tee","email":"gee@example.com","avatar_url":"https://img.test/gee.png"}`,
		emailsPath: "/api/v5/emails", emails: `[{"email":"gee@example.com","state":"confirmed","scope":["primary","committed"]}]`,
		want: oauth2.User{ID: "9", Name: "Gi Tee", Username: "gee", Email: "gee@example.com", EmailVerified: true, AvatarURL: "https://img.test/gee.png"}},
	{name: "gitee unconfirmed", provider: "gitee", user: `{"id":10,"login":"gee2","email":"gee2@example.com"}`,
		emailsPath: "/api/v5/emails", emails: `[{"email":"gee2@example.com","state":"unconfirmed","scope":["primary"]}]`,
		want: oauth2.User{ID: "10", Username: "gee2"}},
	{name: "instagram2", provider: "instagram2", token: map[string]any{"permissions": "instagram_business_basic"},
		user: `{"id":"17841","user_id":"9001","username":"insta","name":"Insta Gram","account_type":"BUSINESS","profile_picture_url":"https://img.test/ig.jpg"}`,
		want: oauth2.User{ID: "9001", Name: "Insta Gram", Username: "insta", AvatarURL: "https://img.test/ig.jpg"}, rawKey: "permissions"},
	{name: "kakao", provider: "kakao", user: `{"id":123456789,"properties":{"nickname":"kko","profile_image":"https://img.test/k.jpg"},"kakao_account":{"email":"k@example.com","is_email_valid":true,"is_email_verified":true}}`,
		want: oauth2.User{ID: "123456789", Username: "kko", AvatarURL: "https://img.test/k.jpg", Email: "k@example.com", EmailVerified: true}},
	{name: "kakao unverified", provider: "kakao", user: `{"id":2,"kakao_account":{"email":"k2@example.com","is_email_valid":true,"is_email_verified":false}}`,
		want: oauth2.User{ID: "2"}},
	{name: "lark", provider: "lark", user: `{"code":0,"msg":"success","data":{"union_id":"on_1","open_id":"ou_1","name":"La Rk","avatar_url":"https://img.test/l.png","email":"lark@example.com"}}`,
		want: oauth2.User{ID: "on_1", Name: "La Rk", AvatarURL: "https://img.test/l.png"}},
	{name: "linear", provider: "linear", user: `{"data":{"viewer":{"id":"lin1","displayName":"lin","name":"Lin Ear","email":"lin@example.com","avatarUrl":"https://img.test/lin.png","active":true}}}`,
		header: map[string]string{"Content-Type": "application/json"}, body: linearQuery,
		want: oauth2.User{ID: "lin1", Name: "Lin Ear", Username: "lin", AvatarURL: "https://img.test/lin.png"}},
	{name: "linear inactive", provider: "linear", user: `{"data":{"viewer":{"id":"lin2","active":false}}}`,
		header: map[string]string{"Content-Type": "application/json"}, body: linearQuery, err: "not active"},
	{name: "livechat", provider: "livechat", user: `{"account_id":"lc1","name":"Live Chat","email":"lc@example.com","email_verified":true,"avatar_url":"https://img.test/lc.png"}`,
		want: oauth2.User{ID: "lc1", Name: "Live Chat", Email: "lc@example.com", EmailVerified: true, AvatarURL: "https://img.test/lc.png"}},
	{name: "livechat unverified", provider: "livechat", user: `{"account_id":"lc2","email":"lc2@example.com","email_verified":false}`,
		want: oauth2.User{ID: "lc2"}},
	// mailcow's email is the mailbox itself: always trusted.
	{name: "mailcow", provider: "mailcow", user: `{"success":true,"id":"3","identifier":"mc@example.com","username":"mc@example.com","full_name":"Mail Cow","email":"mc@example.com","active":1}`,
		want: oauth2.User{ID: "3", Name: "Mail Cow", Username: "mc", Email: "mc@example.com", EmailVerified: true}},
	{name: "mailcow inactive", provider: "mailcow", user: `{"id":"4","username":"x@example.com","active":0}`, err: "not active"},
	{name: "monday", provider: "monday", user: `{"data":{"me":{"id":"44","enabled":true,"name":"Mon Day","email":"md@example.com","is_verified":true,"photo_small":"https://img.test/m.png"}},"account_id":1}`,
		header: map[string]string{"Content-Type": "application/json"}, body: mondayQuery,
		want: oauth2.User{ID: "44", Name: "Mon Day", Email: "md@example.com", EmailVerified: true, AvatarURL: "https://img.test/m.png"}},
	{name: "monday unverified", provider: "monday", user: `{"data":{"me":{"id":"45","enabled":true,"email":"md2@example.com","is_verified":false}}}`,
		header: map[string]string{"Content-Type": "application/json"}, body: mondayQuery,
		want: oauth2.User{ID: "45"}},
	{name: "monday disabled", provider: "monday", user: `{"data":{"me":{"id":"46","enabled":false}}}`,
		header: map[string]string{"Content-Type": "application/json"}, body: mondayQuery, err: "not active"},
	{name: "notion", provider: "notion", header: map[string]string{"Notion-Version": "2022-06-28"},
		user: `{"object":"user","id":"bot-1","type":"bot","name":"Integration","avatar_url":null,"bot":{"owner":{"type":"user","user":{"object":"user","id":"n1","name":"No Tion","avatar_url":"https://img.test/n.png","type":"person","person":{"email":"no@example.com"}}},"workspace_name":"WS"}}`,
		want: oauth2.User{ID: "n1", Name: "No Tion", AvatarURL: "https://img.test/n.png"}},
	{name: "patreon", provider: "patreon", user: `{"data":{"id":"pat1","type":"user","attributes":{"full_name":"Pat Reon","vanity":"pat","image_url":"https://img.test/p.png","email":"pat@example.com","is_email_verified":true}}}`,
		want: oauth2.User{ID: "pat1", Name: "Pat Reon", Username: "pat", AvatarURL: "https://img.test/p.png", Email: "pat@example.com", EmailVerified: true}},
	{name: "patreon unverified", provider: "patreon", user: `{"data":{"id":"pat2","attributes":{"email":"pat2@example.com","is_email_verified":false}}}`,
		want: oauth2.User{ID: "pat2"}},
	{name: "planningcenter", provider: "planningcenter", user: `{"data":{"type":"Person","id":"pc1","attributes":{"name":"Plan Ning","avatar":"https://img.test/pc.png","status":"active"}}}`,
		want: oauth2.User{ID: "pc1", Name: "Plan Ning", AvatarURL: "https://img.test/pc.png"}},
	{name: "planningcenter inactive", provider: "planningcenter", user: `{"data":{"id":"pc2","attributes":{"status":"inactive"}}}`, err: "not active"},
	{name: "spotify", provider: "spotify", user: `{"id":"spot1","display_name":"Spot Ify","email":"s@example.com","images":[{"url":"https://img.test/s1.jpg","height":300},{"url":"https://img.test/s2.jpg"}]}`,
		want: oauth2.User{ID: "spot1", Name: "Spot Ify", AvatarURL: "https://img.test/s1.jpg"}},
	{name: "strava", provider: "strava", user: `{"id":1234567,"username":"strv","firstname":"Stra","lastname":"Va","profile":"https://img.test/st.jpg"}`,
		want: oauth2.User{ID: "1234567", Name: "Stra Va", Username: "strv", AvatarURL: "https://img.test/st.jpg"}},
	{name: "trakt", provider: "trakt", header: map[string]string{"Trakt-Api-Key": "client-id", "Trakt-Api-Version": "2", "Content-Type": "application/json"},
		user: `{"user":{"username":"trk","name":"Tra Kt","ids":{"slug":"trk","uuid":"tr-uuid-1"},"images":{"avatar":{"full":"https://img.test/t.png"}}},"account":{"timezone":"UTC"}}`,
		want: oauth2.User{ID: "tr-uuid-1", Name: "Tra Kt", Username: "trk", AvatarURL: "https://img.test/t.png"}},
	// Twitch documents its email as verified: trusted.
	{name: "twitch", provider: "twitch", header: map[string]string{"Client-Id": "client-id"},
		user: `{"data":[{"id":"141981764","login":"twitchdev","display_name":"TwitchDev","email":"tw@example.com","profile_image_url":"https://img.test/tw.png"}]}`,
		want: oauth2.User{ID: "141981764", Name: "TwitchDev", Username: "twitchdev", Email: "tw@example.com", EmailVerified: true, AvatarURL: "https://img.test/tw.png"}},
	{name: "twitch no user", provider: "twitch", header: map[string]string{"Client-Id": "client-id"}, user: `{"data":[]}`, err: "no id"},
	// confirmed_email is only ever a confirmed address: trusted.
	{name: "twitter", provider: "twitter", user: `{"data":{"id":"2244994945","name":"X Dev","username":"XDevelopers","confirmed_email":"x@example.com","profile_image_url":"https://img.test/x.png"}}`,
		want: oauth2.User{ID: "2244994945", Name: "X Dev", Username: "XDevelopers", Email: "x@example.com", EmailVerified: true, AvatarURL: "https://img.test/x.png"}},
	{name: "vk", provider: "vk", token: map[string]any{"email": "vk@example.com", "user_id": 210700286},
		user: `{"response":[{"id":210700286,"first_name":"Lind","last_name":"Sey","screen_name":"lindsey","photo_max":"https://img.test/vk.jpg"}]}`,
		want: oauth2.User{ID: "210700286", Name: "Lind Sey", Username: "lindsey", AvatarURL: "https://img.test/vk.jpg"}, rawKey: "email"},
	{name: "wakatime", provider: "wakatime", user: `{"data":{"id":"wk1","display_name":"Waka Time","username":"waka","email":"wk@example.com","is_email_confirmed":true,"photo":"https://img.test/w.png","photo_public":true}}`,
		want: oauth2.User{ID: "wk1", Name: "Waka Time", Username: "waka", Email: "wk@example.com", EmailVerified: true, AvatarURL: "https://img.test/w.png"}},
	{name: "wakatime unconfirmed, private photo", provider: "wakatime", user: `{"data":{"id":"wk2","email":"wk2@example.com","is_email_confirmed":false,"photo":"https://img.test/w2.png","photo_public":false}}`,
		want: oauth2.User{ID: "wk2"}},
	{name: "yandex", provider: "yandex", user: `{"id":"1000034426","login":"ivan","real_name":"Ivan Ivanov","default_email":"ivan@example.com","default_avatar_id":"131652443","is_avatar_empty":false}`,
		want: oauth2.User{ID: "1000034426", Name: "Ivan Ivanov", Username: "ivan", AvatarURL: "https://avatars.yandex.net/get-yapic/131652443/islands-200"}},
}

// The GraphQL bodies linear and monday are sent, as PocketBase sends them.
const (
	linearQuery = `{"query":"query Me { viewer { id displayName name email avatarUrl active } }"}`
	mondayQuery = `{"query":"query { me { id enabled name email is_verified photo_small }}"}`
)

// apiRequest is one request presetAPI received.
type apiRequest struct {
	method, uri string
	header      http.Header
	body        string
}

// presetAPI plays a provider's API on 127.0.0.1 for one presetCase at a
// time: the token endpoint at the preset's token path, the user-info and
// emails answers of the case at theirs. The id_tokens are signed by the
// loopback provider idp, whose JWKS the client reads.
type presetAPI struct {
	srv *httptest.Server
	idp *oauth2provider.Provider

	mu   sync.Mutex
	c    presetCase
	cfg  oauth2.Config
	reqs []apiRequest
}

func newPresetAPI(tb testing.TB) *presetAPI {
	tb.Helper()
	a := &presetAPI{idp: oauth2provider.Start(tb)}
	a.idp.Now = func() time.Time { return now }
	a.srv = httptest.NewServer(a)
	tb.Cleanup(a.srv.Close)
	return a
}

// use makes c the case served and returns its config: the preset's URLs
// on this server (the paths and queries kept), as a collection overrides
// them; mailcow and oidc, which have none, get /oauth/….
func (a *presetAPI) use(c presetCase) oauth2.Config {
	d, _ := oauth2.Preset(c.provider)
	rehost := func(u, fallback string) string {
		if u == "" {
			return a.srv.URL + fallback
		}
		p, _ := url.Parse(u)
		return a.srv.URL + p.RequestURI()
	}
	cfg := oauth2.Config{Name: c.provider, ClientID: a.idp.ClientID, ClientSecret: a.idp.ClientSecret,
		AuthURL: rehost(d.AuthURL, "/oauth/authorize"), TokenURL: rehost(d.TokenURL, "/oauth/token"),
		UserInfoURL: rehost(d.UserInfoURL, "/oauth/profile")}
	if c.idToken != nil {
		cfg.UserInfoURL = ""
		cfg.Extra = json.RawMessage(`{"jwksURL":"` + a.idp.URL + oauth2provider.PathJWKS + `","issuers":["` + a.idp.Issuer + `"]}`)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.c, a.cfg, a.reqs = c, cfg, nil
	return cfg
}

// requests returns what the server received since use.
func (a *presetAPI) requests() []apiRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.reqs)
}

func (a *presetAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	c, cfg := a.c, a.cfg
	a.reqs = append(a.reqs, apiRequest{r.Method, r.URL.RequestURI(), r.Header.Clone(), string(body)})
	a.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch uri := r.URL.RequestURI(); {
	case r.Method == http.MethodPost && a.srv.URL+uri == cfg.TokenURL:
		form, _ := url.ParseQuery(string(body))
		id, secret, ok := r.BasicAuth()
		if !ok {
			id, secret = form.Get("client_id"), form.Get("client_secret")
		}
		if id != cfg.ClientID || secret != cfg.ClientSecret {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":"invalid_client"}`)
			return
		}
		tok := map[string]any{"access_token": "at-" + c.provider, "refresh_token": "rt-" + c.provider, "expires_in": 3600, "token_type": "bearer"}
		for k, v := range c.token {
			tok[k] = v
		}
		if c.idToken != nil {
			tok["id_token"] = a.idp.IDToken(c.idToken)
		}
		json.NewEncoder(w).Encode(tok)
	case c.user != "" && a.srv.URL+uri == cfg.UserInfoURL:
		io.WriteString(w, c.user)
	case c.emailsPath != "" && uri == c.emailsPath:
		io.WriteString(w, c.emails)
	default:
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"not_found"}`)
	}
}

// TestPresetExchange: for every preset, a whole Exchange against the
// provider's API shape on loopback: the token request (PKCE by the
// preset's default, the credentials where the endpoint wants them), the
// user-info request (method, Bearer, the preset's headers and GraphQL
// body), the emails API where there is one, and the exact User.
func TestPresetExchange(t *testing.T) {
	a := newPresetAPI(t)
	const verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	covered := map[string]bool{}
	for _, tc := range presetCases {
		covered[tc.provider] = true
		t.Run(tc.name, func(t *testing.T) {
			cfg := a.use(tc)
			// A client per case: a client remembers how each token URL
			// took the credentials, and two presets share a path here
			// (twitch's and monday's /oauth2/token).
			c := newClient(oauth2.Options{})
			u, err := c.Exchange(t.Context(), cfg, "the-code", verifier, "https://app.test/api/oauth2-redirect")
			reqs := a.requests()
			checkTokenRequest(t, tc.provider, reqs, verifier)
			checkUserRequests(t, tc, cfg, reqs)
			if tc.err != "" {
				if !errors.Is(err, oauth2.ErrUser) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Exchange() = %+v, %v; want ErrUser with %q", u, err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Exchange: %v", err)
			}
			if u.AccessToken != "at-"+tc.provider || u.RefreshToken != "rt-"+tc.provider || !u.Expiry.Equal(now.Add(time.Hour)) {
				t.Errorf("tokens = %q, %q, %v; want the provider's, expiring in an hour", u.AccessToken, u.RefreshToken, u.Expiry)
			}
			if _, ok := u.Raw[tc.rawKey]; tc.rawKey != "" && !ok {
				t.Errorf("Raw = %v, want key %q", u.Raw, tc.rawKey)
			}
			got := *u
			got.AccessToken, got.RefreshToken, got.Expiry, got.Raw = "", "", time.Time{}, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Exchange() user =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
	for _, name := range oauth2.Names() {
		if !covered[name] {
			t.Errorf("preset %s has no case", name)
		}
	}
}

// checkTokenRequest: the first request is the token request, with the
// code_verifier unless the provider does not use PKCE, and the client
// credentials in the body or as HTTP Basic as the provider wants them.
func checkTokenRequest(t *testing.T, provider string, reqs []apiRequest, verifier string) {
	t.Helper()
	if len(reqs) == 0 || reqs[0].method != http.MethodPost {
		t.Fatalf("requests = %+v, want the token request first", reqs)
	}
	form, _ := url.ParseQuery(reqs[0].body)
	wantVerifier := verifier
	if slices.Contains(noPKCE, provider) {
		wantVerifier = ""
	}
	if got := form.Get("code_verifier"); got != wantVerifier || form.Get("code") != "the-code" || form.Get("grant_type") != "authorization_code" {
		t.Errorf("token request form = %v, want code the-code and code_verifier %q", form, wantVerifier)
	}
	_, _, basic := (&http.Request{Header: reqs[0].header}).BasicAuth()
	if inBody := form.Get("client_secret") != ""; basic == inBody || inBody != slices.Contains(bodyAuth, provider) {
		t.Errorf("token request: Basic %v, secret in the body %v; want the body only for %v", basic, inBody, bodyAuth)
	}
}

// checkUserRequests: after the token request, the user-info request (for
// a provider without id_token) and the emails request, and nothing else.
func checkUserRequests(t *testing.T, tc presetCase, cfg oauth2.Config, reqs []apiRequest) {
	t.Helper()
	var want []string
	if tc.idToken == nil {
		method := http.MethodGet
		if tc.body != "" {
			method = http.MethodPost
		}
		want = append(want, method+" "+mustURI(cfg.UserInfoURL))
	}
	if tc.emailsPath != "" {
		want = append(want, "GET "+tc.emailsPath)
	}
	var got []string
	for _, r := range reqs[1:] {
		got = append(got, r.method+" "+r.uri)
		if r.header.Get("Authorization") != "Bearer at-"+tc.provider {
			t.Errorf("%s %s: Authorization %q, want the Bearer token", r.method, r.uri, r.header.Get("Authorization"))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("requests after the token = %q, want %q", got, want)
	}
	if tc.idToken != nil {
		return
	}
	r := reqs[1]
	for k, v := range tc.header {
		if r.header.Get(k) != v {
			t.Errorf("user-info request header %s = %q, want %q", k, r.header.Get(k), v)
		}
	}
	if r.body != tc.body {
		t.Errorf("user-info request body = %q, want %q", r.body, tc.body)
	}
}

// mustURI is the path and query of u.
func mustURI(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		panic(err)
	}
	return p.RequestURI()
}

// TestNamesAreProviderNames: the presets are exactly the names a
// collection may save (authn.ProviderNames), so that no saved provider
// lacks a preset.
func TestNamesAreProviderNames(t *testing.T) {
	if got := oauth2.Names(); !slices.Equal(got, authn.ProviderNames) {
		t.Errorf("oauth2.Names() = %q\nwant authn.ProviderNames %q", got, authn.ProviderNames)
	}
}

// BenchmarkPresetExchange: one whole exchange per preset (its first case)
// against presetAPI on loopback.
//
//	go test -run '^$' -bench PresetExchange -benchtime 200x ./authn/oauth2
func BenchmarkPresetExchange(b *testing.B) {
	a := newPresetAPI(b)
	c := newClient(oauth2.Options{})
	seen := map[string]bool{}
	for _, tc := range presetCases {
		if seen[tc.provider] {
			continue
		}
		seen[tc.provider] = true
		b.Run(tc.provider, func(b *testing.B) {
			cfg := a.use(tc)
			for b.Loop() {
				a.use(tc)
				if _, err := c.Exchange(b.Context(), cfg, "the-code", "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "https://app.test/r"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
