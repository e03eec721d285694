package oauth2

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// preset is a built-in provider: its endpoints, scopes, PKCE default and
// how its user JSON maps to a User, after PocketBase v0.31.0's providers.
// The user is read with GET <userInfoURL> and the access token as Bearer
// unless the fields below say more.
type preset struct {
	displayName string
	authURL     string
	tokenURL    string
	userInfoURL string
	scopes      []string
	pkce        bool

	// idToken: the user comes from the token response's id_token, not
	// from a user-info endpoint (apple; oidc without userInfoURL).
	idToken bool
	// jwksURL and issuer: the id_token's signing keys and issuer (apple);
	// extra.jwksURL and extra.issuers override them.
	jwksURL string
	issuer  string
	// formPost: the authorization URL asks for response_mode=form_post
	// (apple posts the code to the redirect URL).
	formPost bool
	// bodyAuth: the token endpoint takes the client credentials in the
	// body only, so Basic is not tried first: apple, and box, instagram2,
	// strava, twitch and vk, whose endpoints refuse Basic without the
	// invalid_client that makes the client retry (golang.org/x/oauth2
	// long sent the credentials in the body to these hosts for that).
	bodyAuth bool
	// headers: more headers of the user-info request (notion's API
	// version, the client id that trakt and twitch want).
	headers func(cfg Config) http.Header
	// query: the user-info request is a POST of this GraphQL query as
	// JSON (linear, monday).
	query string
	// tokenFields: fields of the token response put into the user JSON
	// when it has none of that name, before the mapping (instagram's
	// permissions, vk's email).
	tokenFields []string
	// active reports whether the user JSON is of an account that may sign
	// in; PocketBase refuses the others ("not active"). nil: every one.
	active func(raw map[string]any) bool
	// emails: when the mapping found no trusted email, a second call for
	// the primary verified address (github, gitea, gitee, bitbucket).
	emails *emailsAPI
	// user maps the provider's user JSON (or id_token claims) to a User.
	user func(raw map[string]any) User
}

// emailsAPI is a provider's list of the user's addresses.
type emailsAPI struct {
	// url is the endpoint, from the resolved userInfoURL (so that it
	// follows a collection's override).
	url func(userInfoURL string) string
	// primary returns the primary verified address of the answer, or "".
	primary func(v any) string
}

// presets are the built-in providers: every name PocketBase v0.31.0
// registers (authn.ProviderNames).
var presets = map[string]*preset{
	"google": {
		displayName: "Google",
		authURL:     "https://accounts.google.com/o/oauth2/v2/auth",
		tokenURL:    "https://oauth2.googleapis.com/token",
		userInfoURL: "https://www.googleapis.com/oauth2/v3/userinfo",
		scopes:      []string{"https://www.googleapis.com/auth/userinfo.profile", "https://www.googleapis.com/auth/userinfo.email"},
		pkce:        true,
		user:        oidcUser,
	},
	"github": {
		displayName: "GitHub",
		authURL:     "https://github.com/login/oauth/authorize",
		tokenURL:    "https://github.com/login/oauth/access_token",
		userInfoURL: "https://api.github.com/user",
		scopes:      []string{"read:user", "user:email"},
		pkce:        true,
		emails:      githubEmails,
		user:        githubUser,
	},
	"gitlab": {
		displayName: "GitLab",
		authURL:     "https://gitlab.com/oauth/authorize",
		tokenURL:    "https://gitlab.com/oauth/token",
		userInfoURL: "https://gitlab.com/api/v4/user",
		scopes:      []string{"read_user"},
		pkce:        true,
		user:        gitlabUser,
	},
	"microsoft": {
		displayName: "Microsoft",
		authURL:     "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
		tokenURL:    "https://login.microsoftonline.com/common/oauth2/v2.0/token",
		userInfoURL: "https://graph.microsoft.com/v1.0/me",
		scopes:      []string{"User.Read"},
		pkce:        true,
		user:        microsoftUser,
	},
	"discord": {
		displayName: "Discord",
		authURL:     "https://discord.com/api/oauth2/authorize",
		tokenURL:    "https://discord.com/api/oauth2/token",
		userInfoURL: "https://discord.com/api/users/@me",
		scopes:      []string{"identify", "email"},
		pkce:        true,
		user:        discordUser,
	},
	"apple": {
		displayName: "Apple",
		authURL:     "https://appleid.apple.com/auth/authorize",
		tokenURL:    "https://appleid.apple.com/auth/token",
		scopes:      []string{"name", "email"},
		pkce:        true,
		idToken:     true,
		jwksURL:     "https://appleid.apple.com/auth/keys",
		issuer:      "https://appleid.apple.com",
		formPost:    true,
		bodyAuth:    true,
		user:        oidcUser,
	},
	"oidc":  oidcPreset(),
	"oidc2": oidcPreset(),
	"oidc3": oidcPreset(),
	"bitbucket": {
		displayName: "Bitbucket",
		authURL:     "https://bitbucket.org/site/oauth2/authorize",
		tokenURL:    "https://bitbucket.org/site/oauth2/access_token",
		userInfoURL: "https://api.bitbucket.org/2.0/user",
		scopes:      []string{"account"},
		active:      equals("account_status", "active"),
		emails:      bitbucketEmails,
		user:        bitbucketUser,
	},
	"box": {
		displayName: "Box",
		authURL:     "https://account.box.com/api/oauth2/authorize",
		tokenURL:    "https://api.box.com/oauth2/token",
		userInfoURL: "https://api.box.com/2.0/users/me",
		scopes:      []string{"root_readonly"},
		pkce:        true,
		bodyAuth:    true,
		active:      equals("status", "active"),
		user:        boxUser,
	},
	"facebook": {
		displayName: "Facebook",
		authURL:     "https://www.facebook.com/v3.2/dialog/oauth",
		tokenURL:    "https://graph.facebook.com/v3.2/oauth/access_token",
		userInfoURL: "https://graph.facebook.com/me?fields=name,email,picture.type(large)",
		scopes:      []string{"email"},
		pkce:        true,
		user:        facebookUser,
	},
	"gitea": {
		displayName: "Gitea",
		authURL:     "https://gitea.com/login/oauth/authorize",
		tokenURL:    "https://gitea.com/login/oauth/access_token",
		userInfoURL: "https://gitea.com/api/v1/user",
		scopes:      []string{"read:user", "user:email"},
		pkce:        true,
		emails:      githubEmails, // Gitea's list has GitHub's shape
		user:        giteaUser,
	},
	"gitee": {
		displayName: "Gitee",
		authURL:     "https://gitee.com/oauth/authorize",
		tokenURL:    "https://gitee.com/oauth/token",
		userInfoURL: "https://gitee.com/api/v5/user",
		scopes:      []string{"user_info", "emails"},
		pkce:        true,
		emails:      giteeEmails,
		user:        giteeUser,
	},
	"instagram2": {
		displayName: "Instagram",
		authURL:     "https://www.instagram.com/oauth/authorize",
		tokenURL:    "https://api.instagram.com/oauth/access_token",
		userInfoURL: "https://graph.instagram.com/me?fields=id,username,account_type,user_id,name,profile_picture_url,followers_count,follows_count,media_count",
		scopes:      []string{"instagram_business_basic"},
		pkce:        true,
		bodyAuth:    true,
		tokenFields: []string{"permissions"},
		user:        instagramUser,
	},
	"kakao": {
		displayName: "Kakao",
		authURL:     "https://kauth.kakao.com/oauth/authorize",
		tokenURL:    "https://kauth.kakao.com/oauth/token",
		userInfoURL: "https://kapi.kakao.com/v2/user/me",
		scopes:      []string{"account_email", "profile_nickname", "profile_image"},
		pkce:        true,
		user:        kakaoUser,
	},
	"lark": {
		displayName: "Lark",
		authURL:     "https://accounts.feishu.cn/open-apis/authen/v1/authorize",
		tokenURL:    "https://open.feishu.cn/open-apis/authen/v2/oauth/token",
		userInfoURL: "https://open.feishu.cn/open-apis/authen/v1/user_info",
		pkce:        true,
		user:        larkUser,
	},
	"linear": {
		displayName: "Linear",
		authURL:     "https://linear.app/oauth/authorize",
		tokenURL:    "https://api.linear.app/oauth/token",
		userInfoURL: "https://api.linear.app/graphql",
		scopes:      []string{"read"},
		// No PKCE: Linear answers an error when it is sent.
		query:  "query Me { viewer { id displayName name email avatarUrl active } }",
		active: func(raw map[string]any) bool { return sub(raw, "data", "viewer")["active"] == true },
		user:   linearUser,
	},
	"livechat": {
		displayName: "LiveChat",
		authURL:     "https://accounts.livechat.com/",
		tokenURL:    "https://accounts.livechat.com/token",
		userInfoURL: "https://accounts.livechat.com/v2/accounts/me",
		// No scopes: LiveChat takes them from the app's settings.
		pkce: true,
		user: livechatUser,
	},
	"mailcow": {
		// Self-hosted: no endpoints of its own, like oidc.
		displayName: "mailcow",
		scopes:      []string{"profile"},
		pkce:        true,
		active:      equals("active", "1"),
		user:        mailcowUser,
	},
	"monday": {
		displayName: "monday.com",
		authURL:     "https://auth.monday.com/oauth2/authorize",
		tokenURL:    "https://auth.monday.com/oauth2/token",
		userInfoURL: "https://api.monday.com/v2",
		scopes:      []string{"me:read"},
		pkce:        true,
		query:       "query { me { id enabled name email is_verified photo_small }}",
		active:      func(raw map[string]any) bool { return sub(raw, "data", "me")["enabled"] == true },
		user:        mondayUser,
	},
	"notion": {
		displayName: "Notion",
		authURL:     "https://api.notion.com/v1/oauth/authorize",
		tokenURL:    "https://api.notion.com/v1/oauth/token",
		userInfoURL: "https://api.notion.com/v1/users/me",
		pkce:        true,
		headers:     constHeader("Notion-Version", "2022-06-28"),
		user:        notionUser,
	},
	"patreon": {
		displayName: "Patreon",
		authURL:     "https://www.patreon.com/oauth2/authorize",
		tokenURL:    "https://www.patreon.com/api/oauth2/token",
		userInfoURL: "https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=full_name,email,vanity,image_url,is_email_verified",
		scopes:      []string{"identity", "identity[email]"},
		pkce:        true,
		user:        patreonUser,
	},
	"planningcenter": {
		displayName: "Planning Center",
		authURL:     "https://api.planningcenteronline.com/oauth/authorize",
		tokenURL:    "https://api.planningcenteronline.com/oauth/token",
		userInfoURL: "https://api.planningcenteronline.com/people/v2/me",
		scopes:      []string{"people"},
		pkce:        true,
		active:      func(raw map[string]any) bool { return str(sub(raw, "data", "attributes"), "status") == "active" },
		user:        planningcenterUser,
	},
	"spotify": {
		displayName: "Spotify",
		authURL:     "https://accounts.spotify.com/authorize",
		tokenURL:    "https://accounts.spotify.com/api/token",
		userInfoURL: "https://api.spotify.com/v1/me",
		scopes:      []string{"user-read-private"},
		pkce:        true,
		user:        spotifyUser,
	},
	"strava": {
		displayName: "Strava",
		authURL:     "https://www.strava.com/oauth/authorize",
		tokenURL:    "https://www.strava.com/api/v3/oauth/token",
		userInfoURL: "https://www.strava.com/api/v3/athlete",
		scopes:      []string{"profile:read_all"},
		pkce:        true,
		bodyAuth:    true,
		user:        stravaUser,
	},
	"trakt": {
		displayName: "Trakt",
		authURL:     "https://trakt.tv/oauth/authorize",
		tokenURL:    "https://api.trakt.tv/oauth/token",
		userInfoURL: "https://api.trakt.tv/users/settings",
		pkce:        true,
		headers: func(cfg Config) http.Header {
			return http.Header{"Content-Type": {"application/json"}, "Trakt-Api-Key": {cfg.ClientID}, "Trakt-Api-Version": {"2"}}
		},
		user: traktUser,
	},
	"twitch": {
		displayName: "Twitch",
		authURL:     "https://id.twitch.tv/oauth2/authorize",
		tokenURL:    "https://id.twitch.tv/oauth2/token",
		userInfoURL: "https://api.twitch.tv/helix/users",
		scopes:      []string{"user:read:email"},
		pkce:        true,
		bodyAuth:    true,
		headers:     func(cfg Config) http.Header { return http.Header{"Client-Id": {cfg.ClientID}} },
		user:        twitchUser,
	},
	"twitter": {
		displayName: "X/Twitter",
		authURL:     "https://x.com/i/oauth2/authorize",
		tokenURL:    "https://api.x.com/2/oauth2/token",
		userInfoURL: "https://api.x.com/2/users/me?user.fields=id,name,username,profile_image_url,confirmed_email",
		// offline.access (a refresh token) is left out, as PocketBase
		// leaves it out.
		scopes: []string{"users.read", "users.email", "tweet.read"},
		pkce:   true,
		user:   twitterUser,
	},
	"vk": {
		displayName: "ВКонтакте",
		authURL:     "https://oauth.vk.com/authorize",
		tokenURL:    "https://oauth.vk.com/access_token",
		userInfoURL: "https://api.vk.com/method/users.get?fields=photo_max,screen_name&v=5.131",
		scopes:      []string{"email"},
		// No PKCE: VK answers an error when it is sent.
		bodyAuth:    true,
		tokenFields: []string{"email"},
		user:        vkUser,
	},
	"wakatime": {
		displayName: "WakaTime",
		authURL:     "https://wakatime.com/oauth/authorize",
		tokenURL:    "https://wakatime.com/oauth/token",
		userInfoURL: "https://wakatime.com/api/v1/users/current",
		scopes:      []string{"email"},
		pkce:        true,
		user:        wakatimeUser,
	},
	"yandex": {
		displayName: "Yandex",
		authURL:     "https://oauth.yandex.com/authorize",
		tokenURL:    "https://oauth.yandex.com/token",
		userInfoURL: "https://login.yandex.ru/info",
		scopes:      []string{"login:email", "login:avatar", "login:info"},
		pkce:        true,
		user:        yandexUser,
	},
}

// oidcPreset is the generic OpenID Connect provider: no endpoints of its
// own (authURL and tokenURL must be configured), claims from the
// userInfoURL when set, else from the validated id_token.
func oidcPreset() *preset {
	return &preset{
		displayName: "OIDC",
		scopes:      []string{"openid", "email", "profile"},
		pkce:        true,
		user:        oidcUser,
	}
}

// constHeader is a headers func of one fixed header.
func constHeader(key, value string) func(Config) http.Header {
	return func(Config) http.Header { return http.Header{key: {value}} }
}

// equals is an active func: the user JSON's key has the value (a string,
// or a number in its JSON spelling).
func equals(key, value string) func(map[string]any) bool {
	return func(raw map[string]any) bool { return str(raw, key) == value }
}

// Known reports whether name is a provider strongbox knows.
func Known(name string) bool {
	_, ok := presets[name]
	return ok
}

// Names returns the known provider names, sorted.
func Names() []string {
	names := make([]string, 0, len(presets))
	for n := range presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Preset returns the defaults of the provider name (endpoints, scopes,
// PKCE, display name), with no client credentials; false when the name
// is unknown.
func Preset(name string) (Config, bool) {
	p, ok := presets[name]
	if !ok {
		return Config{}, false
	}
	return Config{
		Name:        name,
		AuthURL:     p.authURL,
		TokenURL:    p.tokenURL,
		UserInfoURL: p.userInfoURL,
		DisplayName: p.displayName,
		PKCE:        p.pkce,
		Scopes:      slices.Clone(p.scopes),
	}, true
}

// Resolve fills what the collection left empty in c with the preset's
// defaults, as PocketBase v0.31.0 does (non-empty URLs and displayName
// override, a non-nil pkce overrides the PKCE default). For an unknown
// name it returns c with the display name defaulting to the name.
func Resolve(c Config) Config {
	d, ok := Preset(c.Name)
	if !ok {
		d = Config{DisplayName: c.Name, PKCE: c.PKCE}
	}
	fill := func(v *string, def string) {
		if *v == "" {
			*v = def
		}
	}
	fill(&c.AuthURL, d.AuthURL)
	fill(&c.TokenURL, d.TokenURL)
	fill(&c.UserInfoURL, d.UserInfoURL)
	fill(&c.DisplayName, d.DisplayName)
	if len(c.Scopes) == 0 {
		c.Scopes = d.Scopes
	}
	c.PKCE = d.PKCE
	if c.PKCEOverride != nil {
		c.PKCE = *c.PKCEOverride
	}
	return c
}

// extra is the provider-specific `extra` object. Only OIDC (and apple)
// read it: jwksURL, the id_token's signing keys; issuers, the accepted
// `iss` values, as in PocketBase v0.31.0's OIDC provider.
type extra struct {
	JWKSURL string   `json:"jwksURL"`
	Issuers []string `json:"issuers"`
}

func parseExtra(raw json.RawMessage) (extra, error) {
	var e extra
	if len(raw) == 0 || string(raw) == "null" {
		return e, nil
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return e, fmt.Errorf("oauth2: extra: %w", err)
	}
	return e, nil
}
