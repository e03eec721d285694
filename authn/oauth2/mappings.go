package oauth2

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// The user mappings. Each keeps the whole JSON as Raw. Email is filled
// only when the provider says it is verified (EmailVerified), except where
// the provider only ever returns verified addresses (noted per mapping).

// oidcUser maps OpenID Connect standard claims (google, apple, oidc):
// email only when email_verified is true (or "true", as apple sends it).
func oidcUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "sub"),
		Name:      str(raw, "name"),
		Username:  str(raw, "preferred_username"),
		AvatarURL: str(raw, "picture"),
		Raw:       raw,
	}
	if truthy(raw["email_verified"]) {
		u.Email, u.EmailVerified = str(raw, "email"), true
	}
	return u
}

var (
	// githubUser: GitHub lets a user publish only a verified address as
	// the profile email, so it is trusted; without one the client reads
	// the emails API (preset.emails).
	githubUser = fields{id: "id", name: "name", username: "login", avatar: "avatar_url", email: "email", trusted: true}.user
	// gitlabUser: `email` is the account's primary email, which GitLab
	// requires to be confirmed before sign-in.
	gitlabUser = fields{id: "id", name: "name", username: "username", avatar: "avatar_url", email: "email", trusted: true}.user
)

// microsoftUser: Graph's `mail` is whatever the tenant set and is not
// verified (the "nOAuth" account takeover), so it is never trusted:
// EmailVerified stays false.
func microsoftUser(raw map[string]any) User {
	return User{
		ID:    str(raw, "id"),
		Name:  str(raw, "displayName"),
		Email: str(raw, "mail"),
		Raw:   raw,
	}
}

// discordUser: email only when `verified`; the avatar is built from the
// CDN path Discord documents.
func discordUser(raw map[string]any) User {
	u := User{
		ID:       str(raw, "id"),
		Name:     str(raw, "global_name"),
		Username: str(raw, "username"),
		Raw:      raw,
	}
	if u.Name == "" {
		u.Name = u.Username
	}
	if a := str(raw, "avatar"); a != "" && u.ID != "" {
		u.AvatarURL = "https://cdn.discordapp.com/avatars/" + url.PathEscape(u.ID) + "/" + url.PathEscape(a) + ".png"
	}
	if truthy(raw["verified"]) {
		u.Email, u.EmailVerified = str(raw, "email"), true
	}
	return u
}

// fields maps a user JSON by its keys, each a dotted path (see sub):
// the object at `at`, then in it the id, name, username and avatar URL,
// and the email when every flag of verified is JSON true there, or always
// when trusted (a provider that only ever returns verified addresses).
// A mapping without email leaves the address to an emails API, or
// untrusted.
type fields struct {
	at, id, name, username, avatar, email string
	verified                              []string
	trusted                               bool
}

func (f fields) user(raw map[string]any) User {
	o := raw
	if f.at != "" {
		o = sub(raw, strings.Split(f.at, ".")...)
	}
	u := User{ID: at(o, f.id), Name: at(o, f.name), Username: at(o, f.username), AvatarURL: at(o, f.avatar), Raw: raw}
	ok := f.email != "" && (f.trusted || len(f.verified) > 0)
	for _, flag := range f.verified {
		keys := strings.Split(flag, ".")
		ok = ok && sub(o, keys[:len(keys)-1]...)[keys[len(keys)-1]] == true
	}
	if ok {
		u.Email = at(o, f.email)
		u.EmailVerified = u.Email != ""
	}
	return u
}

// at reads the dotted path p in o as str does; "" for an empty path.
func at(o map[string]any, p string) string {
	if p == "" {
		return ""
	}
	keys := strings.Split(p, ".")
	return str(sub(o, keys[:len(keys)-1]...), keys[len(keys)-1])
}

// The mappings of the presets beyond the first ones. PocketBase trusts
// some emails that carry no verified flag (box's login, facebook's,
// linear's, notion's, vk's, yandex's, the profile emails of gitea and
// gitee, bitbucket's primary email); strongbox does not.
var (
	// bitbucketUser: no email; the emails API gives a confirmed one.
	bitbucketUser = fields{id: "uuid", name: "display_name", username: "username", avatar: "links.avatar.href"}.user
	// boxUser: `login` is the account's address, with no verified flag.
	boxUser = fields{id: "id", name: "name", avatar: "avatar_url"}.user
	// facebookUser: Graph's `email` has no verified flag.
	facebookUser = fields{id: "id", name: "name", avatar: "picture.data.url"}.user
	// giteaUser: the profile `email` has no verified flag (an instance
	// may not confirm addresses); the emails API gives a verified one.
	giteaUser = fields{id: "id", name: "full_name", username: "login", avatar: "avatar_url"}.user
	// giteeUser: as gitea; the emails API gives a confirmed one.
	giteeUser = fields{id: "id", name: "name", username: "login", avatar: "avatar_url"}.user
	// instagramUser: no email; the id is `user_id`, the professional
	// account's, as PocketBase takes it.
	instagramUser = fields{id: "user_id", name: "name", username: "username", avatar: "profile_picture_url"}.user
	// kakaoUser: email only when Kakao says it is valid and verified.
	kakaoUser = fields{id: "id", username: "properties.nickname", avatar: "properties.profile_image",
		email: "kakao_account.email", verified: []string{"kakao_account.is_email_valid", "kakao_account.is_email_verified"}}.user
	// larkUser: no email; the id is the union_id, the same across a
	// developer's apps.
	larkUser = fields{at: "data", id: "union_id", name: "name", avatar: "avatar_url"}.user
	// linearUser: the GraphQL viewer; its `email` has no verified flag.
	linearUser = fields{at: "data.viewer", id: "id", name: "name", username: "displayName", avatar: "avatarUrl"}.user
	// livechatUser: email only when `email_verified`.
	livechatUser = fields{id: "account_id", name: "name", avatar: "avatar_url", email: "email", verified: []string{"email_verified"}}.user
	// mondayUser: the GraphQL `me`; email only when `is_verified`.
	mondayUser = fields{at: "data.me", id: "id", name: "name", avatar: "photo_small", email: "email", verified: []string{"is_verified"}}.user
	// notionUser: the person who owns the integration's bot; their
	// `email` has no verified flag.
	notionUser = fields{at: "bot.owner.user", id: "id", name: "name", avatar: "avatar_url"}.user
	// patreonUser: a JSON:API document; email only when
	// `is_email_verified`.
	patreonUser = fields{at: "data", id: "id", name: "attributes.full_name", username: "attributes.vanity", avatar: "attributes.image_url",
		email: "attributes.email", verified: []string{"attributes.is_email_verified"}}.user
	// planningcenterUser: a JSON:API document; no email.
	planningcenterUser = fields{at: "data", id: "id", name: "attributes.name", avatar: "attributes.avatar"}.user
	// spotifyUser: no email (the preset's scope does not ask for it); the
	// avatar is the first image.
	spotifyUser = fields{id: "id", name: "display_name", avatar: "images.url"}.user
	// traktUser: the settings' `user`; no email.
	traktUser = fields{at: "user", id: "ids.uuid", name: "name", username: "username", avatar: "images.avatar.full"}.user
	// twitchUser: the first of `data`. Twitch documents `email` as the
	// user's verified address (sent with the user:read:email scope).
	twitchUser = fields{at: "data", id: "id", name: "display_name", username: "login", avatar: "profile_image_url", email: "email", trusted: true}.user
	// twitterUser: `confirmed_email` is, as its name says, only ever a
	// confirmed address.
	twitterUser = fields{at: "data", id: "id", name: "name", username: "username", avatar: "profile_image_url", email: "confirmed_email", trusted: true}.user
)

// mailcowUser: mailcow is the mail server itself: `email` is the mailbox
// the user signed in to, on the server the collection names, so it is
// trusted as an OIDC provider's email_verified is. The username is the
// mailbox's local part, as PocketBase cuts it.
func mailcowUser(raw map[string]any) User {
	u := fields{id: "id", name: "full_name", username: "username", email: "email", trusted: true}.user(raw)
	u.Username, _, _ = strings.Cut(u.Username, "@")
	return u
}

// stravaUser: no email; the name is first and last name. An id of 0 is
// no id, as in PocketBase.
func stravaUser(raw map[string]any) User {
	u := fields{id: "id", username: "username", avatar: "profile"}.user(raw)
	u.Name = strings.TrimSpace(str(raw, "firstname") + " " + str(raw, "lastname"))
	if u.ID == "0" {
		u.ID = ""
	}
	return u
}

// vkUser: the first of `response`; the name is first and last name. The
// email comes with the token (preset.tokenFields puts it in Raw) and has
// no verified flag: not trusted.
func vkUser(raw map[string]any) User {
	u := fields{at: "response", id: "id", username: "screen_name", avatar: "photo_max"}.user(raw)
	r := sub(raw, "response")
	u.Name = strings.TrimSpace(str(r, "first_name") + " " + str(r, "last_name"))
	return u
}

// wakatimeUser: the `data` object; email only when
// `is_email_confirmed`, the photo only when public.
func wakatimeUser(raw map[string]any) User {
	u := fields{at: "data", id: "id", name: "display_name", username: "username", email: "email", verified: []string{"is_email_confirmed"}}.user(raw)
	if d := sub(raw, "data"); d["photo_public"] == true {
		u.AvatarURL = str(d, "photo")
	}
	return u
}

// yandexUser: `default_email` has no verified flag: not trusted. The
// avatar URL is built from the avatar id, as Yandex documents it.
func yandexUser(raw map[string]any) User {
	u := fields{id: "id", name: "real_name", username: "login"}.user(raw)
	if id := str(raw, "default_avatar_id"); id != "" && raw["is_avatar_empty"] != true {
		u.AvatarURL = "https://avatars.yandex.net/get-yapic/" + url.PathEscape(id) + "/islands-200"
	}
	return u
}

// The emails APIs. Each returns the primary address only when the
// provider says it is verified.
var (
	// githubEmails: GET <userInfoURL>/emails, a list of {email, primary,
	// verified} (GitHub, and Gitea with the same shape).
	githubEmails = &emailsAPI{url: emailsAt("emails", true), primary: func(v any) string {
		return pick(v, func(m map[string]any) bool { return m["primary"] == true && m["verified"] == true })
	}}
	// bitbucketEmails: GET <userInfoURL>/emails, a page of {email,
	// is_primary, is_confirmed}. PocketBase takes the primary one,
	// confirmed or not; strongbox only a confirmed one.
	bitbucketEmails = &emailsAPI{url: emailsAt("emails", true), primary: func(v any) string {
		m, _ := v.(map[string]any)
		return pick(m["values"], func(m map[string]any) bool { return m["is_primary"] == true && m["is_confirmed"] == true })
	}}
	// giteeEmails: GET emails beside the user endpoint (/api/v5/emails),
	// a list of {email, state, scope}: state "confirmed" and "primary" in
	// the scope.
	giteeEmails = &emailsAPI{url: emailsAt("emails", false), primary: func(v any) string {
		return pick(v, func(m map[string]any) bool {
			scope, _ := m["scope"].([]any)
			return m["state"] == "confirmed" && slices.Contains(scope, any("primary"))
		})
	}}
)

// emailsAt is an emailsAPI url: name under the user-info URL's path
// (under: …/user → …/user/emails) or beside its last segment
// (…/api/v5/user → …/api/v5/emails), without the user-info URL's query.
func emailsAt(name string, under bool) func(string) string {
	return func(userInfoURL string) string {
		u, err := url.Parse(userInfoURL)
		if err != nil {
			return ""
		}
		if under && !strings.HasSuffix(u.Path, "/") {
			u.Path, u.RawPath = u.Path+"/", ""
		}
		return u.ResolveReference(&url.URL{Path: name}).String()
	}
}

// pick returns the "email" of the first object of the list v that ok
// accepts, or "".
func pick(v any, ok func(map[string]any) bool) string {
	list, _ := v.([]any)
	for _, e := range list {
		if m, _ := e.(map[string]any); m != nil && ok(m) {
			if addr := str(m, "email"); addr != "" {
				return addr
			}
		}
	}
	return ""
}

// sub returns the object at the path of keys in raw, taking the first
// element of a list on the way (twitch's data, vk's response); nil when
// there is none.
func sub(raw map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		v := raw[k]
		if list, ok := v.([]any); ok && len(list) > 0 {
			v = list[0]
		}
		raw, _ = v.(map[string]any)
		if raw == nil {
			return nil
		}
	}
	return raw
}

// str reads raw[key] as a string: strings as they are, numbers (decoded
// as json.Number) in their JSON spelling, anything else as "".
func str(raw map[string]any, key string) string {
	switch v := raw[key].(type) {
	case string:
		return strings.TrimSpace(v)
	case json.Number:
		return v.String()
	}
	return ""
}

// truthy is a JSON true or the string "true" (apple sends booleans as
// strings in its id_token).
func truthy(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}
