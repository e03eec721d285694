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

// githubUser: GitHub lets a user publish only a verified address as the
// profile email, so it is trusted; without one the client reads the
// emails API (preset.emails).
func githubUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "login"),
		Email:     str(raw, "email"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

// gitlabUser: `email` is the account's primary email, which GitLab
// requires to be confirmed before sign-in.
func gitlabUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "username"),
		Email:     str(raw, "email"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

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

// bitbucketUser: the user JSON has no email; the emails API gives it
// (bitbucketEmails).
func bitbucketUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "uuid"),
		Name:      str(raw, "display_name"),
		Username:  str(raw, "username"),
		AvatarURL: str(sub(raw, "links", "avatar"), "href"),
		Raw:       raw,
	}
}

// boxUser: `login` is the account's address, but nothing in the answer
// says it was confirmed. PocketBase trusts it; strongbox does not.
func boxUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
}

// facebookUser: Graph's `email` carries no verified flag. PocketBase
// trusts it; strongbox does not.
func facebookUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		AvatarURL: str(sub(raw, "picture", "data"), "url"),
		Raw:       raw,
	}
}

// giteaUser: the profile `email` carries no verified flag (a Gitea
// instance may not confirm addresses). PocketBase trusts it; strongbox
// takes the primary verified address of the emails API instead.
func giteaUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "id"),
		Name:      str(raw, "full_name"),
		Username:  str(raw, "login"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
}

// giteeUser: as gitea, the profile `email` is not trusted (PocketBase
// takes it when it looks like an address); the emails API gives the
// primary confirmed one (giteeEmails).
func giteeUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "login"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
}

// instagramUser: no email. The id is `user_id` (the professional
// account's), as PocketBase takes it.
func instagramUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "user_id"),
		Name:      str(raw, "name"),
		Username:  str(raw, "username"),
		AvatarURL: str(raw, "profile_picture_url"),
		Raw:       raw,
	}
}

// kakaoUser: email only when Kakao says it is both valid and verified.
func kakaoUser(raw map[string]any) User {
	props, acct := sub(raw, "properties"), sub(raw, "kakao_account")
	u := User{
		ID:        str(raw, "id"),
		Username:  str(props, "nickname"),
		AvatarURL: str(props, "profile_image"),
		Raw:       raw,
	}
	if acct["is_email_valid"] == true && acct["is_email_verified"] == true {
		u.Email, u.EmailVerified = str(acct, "email"), true
	}
	return u
}

// larkUser: no email; the id is the union_id, the same across a
// developer's apps.
func larkUser(raw map[string]any) User {
	d := sub(raw, "data")
	return User{
		ID:        str(d, "union_id"),
		Name:      str(d, "name"),
		AvatarURL: str(d, "avatar_url"),
		Raw:       raw,
	}
}

// linearUser: the viewer of the GraphQL answer; its `email` carries no
// verified flag. PocketBase trusts it; strongbox does not.
func linearUser(raw map[string]any) User {
	v := sub(raw, "data", "viewer")
	return User{
		ID:        str(v, "id"),
		Name:      str(v, "name"),
		Username:  str(v, "displayName"),
		AvatarURL: str(v, "avatarUrl"),
		Raw:       raw,
	}
}

// livechatUser: email only when `email_verified`.
func livechatUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "account_id"),
		Name:      str(raw, "name"),
		AvatarURL: str(raw, "avatar_url"),
		Raw:       raw,
	}
	if raw["email_verified"] == true {
		u.Email, u.EmailVerified = str(raw, "email"), true
	}
	return u
}

// mailcowUser: mailcow is the mail server itself: `email` is the mailbox
// the user signed in to, on the server the collection names, so it is
// trusted as an OIDC provider's email_verified is. The username is the
// mailbox's local part, as PocketBase cuts it.
func mailcowUser(raw map[string]any) User {
	u := User{
		ID:       str(raw, "id"),
		Name:     str(raw, "full_name"),
		Username: str(raw, "username"),
		Email:    str(raw, "email"),
		Raw:      raw,
	}
	u.Username, _, _ = strings.Cut(u.Username, "@")
	u.EmailVerified = u.Email != ""
	return u
}

// mondayUser: the `me` of the GraphQL answer; email only when
// `is_verified`.
func mondayUser(raw map[string]any) User {
	me := sub(raw, "data", "me")
	u := User{
		ID:        str(me, "id"),
		Name:      str(me, "name"),
		AvatarURL: str(me, "photo_small"),
		Raw:       raw,
	}
	if me["is_verified"] == true {
		u.Email, u.EmailVerified = str(me, "email"), true
	}
	return u
}

// notionUser: the person who owns the integration's bot; their `email`
// carries no verified flag. PocketBase trusts it; strongbox does not.
func notionUser(raw map[string]any) User {
	owner := sub(raw, "bot", "owner", "user")
	return User{
		ID:        str(owner, "id"),
		Name:      str(owner, "name"),
		AvatarURL: str(owner, "avatar_url"),
		Raw:       raw,
	}
}

// patreonUser: a JSON:API document; email only when
// `is_email_verified`.
func patreonUser(raw map[string]any) User {
	d := sub(raw, "data")
	attr := sub(d, "attributes")
	u := User{
		ID:        str(d, "id"),
		Name:      str(attr, "full_name"),
		Username:  str(attr, "vanity"),
		AvatarURL: str(attr, "image_url"),
		Raw:       raw,
	}
	if attr["is_email_verified"] == true {
		u.Email, u.EmailVerified = str(attr, "email"), true
	}
	return u
}

// planningcenterUser: a JSON:API document; no email.
func planningcenterUser(raw map[string]any) User {
	d := sub(raw, "data")
	attr := sub(d, "attributes")
	return User{
		ID:        str(d, "id"),
		Name:      str(attr, "name"),
		AvatarURL: str(attr, "avatar"),
		Raw:       raw,
	}
}

// spotifyUser: no email (the preset's scope does not ask for it); the
// avatar is the first image.
func spotifyUser(raw map[string]any) User {
	return User{
		ID:        str(raw, "id"),
		Name:      str(raw, "display_name"),
		AvatarURL: str(sub(raw, "images"), "url"),
		Raw:       raw,
	}
}

// stravaUser: no email; the name is first and last name. An id of 0 is
// no id, as in PocketBase.
func stravaUser(raw map[string]any) User {
	u := User{
		ID:        str(raw, "id"),
		Name:      strings.TrimSpace(str(raw, "firstname") + " " + str(raw, "lastname")),
		Username:  str(raw, "username"),
		AvatarURL: str(raw, "profile"),
		Raw:       raw,
	}
	if u.ID == "0" {
		u.ID = ""
	}
	return u
}

// traktUser: the `user` of the settings; no email.
func traktUser(raw map[string]any) User {
	user := sub(raw, "user")
	return User{
		ID:        str(sub(user, "ids"), "uuid"),
		Name:      str(user, "name"),
		Username:  str(user, "username"),
		AvatarURL: str(sub(user, "images", "avatar"), "full"),
		Raw:       raw,
	}
}

// twitchUser: the first of `data`. Twitch documents `email` as the
// user's verified address (sent only with the user:read:email scope), so
// it is trusted.
func twitchUser(raw map[string]any) User {
	d := sub(raw, "data")
	u := User{
		ID:        str(d, "id"),
		Name:      str(d, "display_name"),
		Username:  str(d, "login"),
		Email:     str(d, "email"),
		AvatarURL: str(d, "profile_image_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

// twitterUser: `confirmed_email` is, as its name says, only a confirmed
// address, so it is trusted.
func twitterUser(raw map[string]any) User {
	d := sub(raw, "data")
	u := User{
		ID:        str(d, "id"),
		Name:      str(d, "name"),
		Username:  str(d, "username"),
		Email:     str(d, "confirmed_email"),
		AvatarURL: str(d, "profile_image_url"),
		Raw:       raw,
	}
	u.EmailVerified = u.Email != ""
	return u
}

// vkUser: the first of `response`. The email comes with the token
// (preset.tokenFields puts it in Raw) and carries no verified flag.
// PocketBase trusts it; strongbox does not.
func vkUser(raw map[string]any) User {
	r := sub(raw, "response")
	return User{
		ID:        str(r, "id"),
		Name:      strings.TrimSpace(str(r, "first_name") + " " + str(r, "last_name")),
		Username:  str(r, "screen_name"),
		AvatarURL: str(r, "photo_max"),
		Raw:       raw,
	}
}

// wakatimeUser: the `data` object; email only when
// `is_email_confirmed`, the photo only when public.
func wakatimeUser(raw map[string]any) User {
	d := sub(raw, "data")
	u := User{
		ID:       str(d, "id"),
		Name:     str(d, "display_name"),
		Username: str(d, "username"),
		Raw:      raw,
	}
	if d["is_email_confirmed"] == true {
		u.Email, u.EmailVerified = str(d, "email"), true
	}
	if d["photo_public"] == true {
		u.AvatarURL = str(d, "photo")
	}
	return u
}

// yandexUser: `default_email` carries no verified flag. PocketBase
// trusts it; strongbox does not. The avatar URL is built from the avatar
// id, as Yandex documents it.
func yandexUser(raw map[string]any) User {
	u := User{
		ID:       str(raw, "id"),
		Name:     str(raw, "real_name"),
		Username: str(raw, "login"),
		Raw:      raw,
	}
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
	githubEmails = &emailsAPI{url: appendPath("/emails"), primary: func(v any) string {
		return pick(v, func(m map[string]any) bool { return m["primary"] == true && m["verified"] == true })
	}}
	// bitbucketEmails: GET <userInfoURL>/emails, a page of {email,
	// is_primary, is_confirmed}. PocketBase takes the primary one,
	// confirmed or not; strongbox only a confirmed one.
	bitbucketEmails = &emailsAPI{url: appendPath("/emails"), primary: func(v any) string {
		m, _ := v.(map[string]any)
		return pick(m["values"], func(m map[string]any) bool { return m["is_primary"] == true && m["is_confirmed"] == true })
	}}
	// giteeEmails: GET emails beside the user endpoint (/api/v5/emails),
	// a list of {email, state, scope}: state "confirmed" and "primary" in
	// the scope.
	giteeEmails = &emailsAPI{url: sibling("emails"), primary: func(v any) string {
		return pick(v, func(m map[string]any) bool {
			scope, _ := m["scope"].([]any)
			return m["state"] == "confirmed" && slices.Contains(scope, any("primary"))
		})
	}}
)

// appendPath is an emailsAPI url: the user-info URL's path with p
// appended (its query dropped).
func appendPath(p string) func(string) string {
	return func(userInfoURL string) string {
		u, err := url.Parse(userInfoURL)
		if err != nil {
			return ""
		}
		u.RawQuery, u.Fragment = "", ""
		u.Path = strings.TrimSuffix(u.Path, "/") + p
		u.RawPath = ""
		return u.String()
	}
}

// sibling is an emailsAPI url: name beside the user-info URL's last path
// segment (…/api/v5/user → …/api/v5/emails).
func sibling(name string) func(string) string {
	return func(userInfoURL string) string {
		u, err := url.Parse(userInfoURL)
		if err != nil {
			return ""
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
