package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"strongbox/authn"
	"strongbox/authn/oauth2"
	"strongbox/authn/validation"
)

// Messages of OAuth2 sign-in, PocketBase v0.31.0's.
const (
	msgOAuth2Off    = "The collection is not configured to allow OAuth2 authentication."
	msgOAuth2Token  = "Failed to fetch OAuth2 token."
	msgOAuth2User   = "Failed to fetch OAuth2 user."
	msgCreateFailed = "Failed to create record."
)

// exchangeTimeout bounds a code exchange and user fetch together, as
// PocketBase's 30 s does; the Exchanger bounds each of its calls too.
const exchangeTimeout = 30 * time.Second

// oauth2Config returns the provider p of a collection, resolved against
// its preset (oauth2.Resolve): endpoints, display name and scopes left
// empty are the preset's, and PKCE is the collection's pkce when set, else
// the preset's default, as in PocketBase v0.31.0.
func oauth2Config(p *authn.Provider) oauth2.Config {
	return oauth2.Resolve(oauth2.Config{
		Name: p.Name, ClientID: p.ClientID, ClientSecret: p.ClientSecret,
		AuthURL: p.AuthURL, TokenURL: p.TokenURL, UserInfoURL: p.UserInfoURL,
		DisplayName: p.DisplayName, PKCEOverride: p.PKCE, Extra: p.Extra,
	})
}

// handleAuthWithOAuth2 handles POST /api/collections/{collection}/auth-with-oauth2
// (interface §4.5), with the checks in PocketBase v0.31.0's order: the
// code is exchanged for the provider's user, who is resolved to a record
// (authn.Store.SignInOAuth2: link, signed-in record, verified email,
// sign-up) and signed in through the shared end of sign-in (authRule,
// MFA), with the provider's user as meta.
func (s *Server) handleAuthWithOAuth2(w http.ResponseWriter, r *http.Request) error {
	c, b, err := s.authBody(r, oauth2Off)
	if err != nil {
		return err
	}
	in, err := bindOAuth2(r, b, c)
	if err != nil {
		return err
	}
	user, err := s.exchangeOAuth2(r.Context(), in)
	if err != nil {
		return err
	}
	email := user.Email
	if !user.EmailVerified {
		// An unverified provider email is neither matched nor stored
		// (pre-account takeover).
		email = ""
	}
	rec, isNew, err := s.resolveOAuth2(r, c, in, user, email)
	if err != nil {
		return err
	}
	return s.signIn(w, r, c, rec, b.vals, authn.MethodOAuth2, in.mfaID, oauth2Meta(user, email, isNew))
}

// oauth2Request is the body of an auth-with-oauth2, bound and validated.
type oauth2Request struct {
	provider                    *authn.Provider
	code, verifier, redirectURL string
	createData                  map[string]any
	mfaID                       string
}

// bindOAuth2 reads the body b of an auth-with-oauth2 to c: redirectUrl is
// the legacy name of redirectURL, and a provider must be one of c's.
func bindOAuth2(r *http.Request, b *body, c *authn.Collection) (*oauth2Request, error) {
	var in oauth2Request
	var name, alias string
	var err error
	for key, dst := range map[string]*string{"provider": &name, "code": &in.code, "codeVerifier": &in.verifier,
		"redirectURL": &in.redirectURL, "redirectUrl": &alias} {
		if *dst, err = b.str(key); err != nil {
			return nil, err
		}
	}
	if in.redirectURL == "" {
		in.redirectURL = alias
	}
	switch v := b.vals["createData"].(type) {
	case nil:
	case map[string]any:
		in.createData = v
	default:
		return nil, errBadRequest(msgLoadFailed, nil)
	}
	if in.mfaID, err = mfaIDOf(r, b); err != nil {
		return nil, err
	}
	data := validation.Errors{}
	switch {
	case name == "":
		data["provider"] = validation.Required()
	case len(name) > 100:
		data["provider"] = validation.LengthOutOfRange(1, 100)
	default:
		if in.provider = c.OAuth2.Provider(name); in.provider == nil {
			data["provider"] = &validation.Error{Code: validation.CodeInvalidProvider,
				Message: fmt.Sprintf("Provider with name %s is missing or is not enabled.", name),
				Params:  map[string]any{"name": name}}
		}
	}
	if in.code == "" {
		data["code"] = validation.Required()
	}
	if in.redirectURL == "" {
		data["redirectURL"] = validation.Required()
	}
	if len(data) > 0 {
		// PocketBase reports these under the loading message.
		return nil, errValidation(msgLoadFailed, data)
	}
	return &in, nil
}

// exchangeOAuth2 exchanges the code of in for the provider's user, within
// exchangeTimeout. The code verifier goes only to a provider with PKCE.
func (s *Server) exchangeOAuth2(ctx context.Context, in *oauth2Request) (*oauth2.User, error) {
	cfg := oauth2Config(in.provider)
	if !oauth2.Known(cfg.Name) {
		// A name strongbox has no preset for, as PocketBase answers a
		// name it does not register. Every name a collection can save has
		// a preset, so this guards only against the lists drifting apart.
		return nil, newError(http.StatusInternalServerError, "Failed to init provider "+cfg.Name+".", nil)
	}
	verifier := in.verifier
	if !cfg.PKCE {
		verifier = ""
	}
	if s.oauth2 == nil {
		return nil, errBadRequest(msgOAuth2Token, errors.New("no OAuth2 client configured"))
	}
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	user, err := s.oauth2.Exchange(ctx, cfg, in.code, verifier, in.redirectURL)
	cancel()
	if errors.Is(err, oauth2.ErrPrivateAddress) {
		s.logPrivateProvider(err)
	}
	switch {
	case errors.Is(err, oauth2.ErrUser):
		return nil, errBadRequest(msgOAuth2User, s.providerFailed(cfg, err))
	case err != nil:
		return nil, errBadRequest(msgOAuth2Token, s.providerFailed(cfg, err))
	case user == nil || user.ID == "":
		return nil, errBadRequest(msgOAuth2User, errors.New("the provider named no user id"))
	}
	return user, nil
}

// logPrivateProvider tells the server's log why sign-ins with a provider
// fail: its URLs lead to a private address, which the client refuses
// (oauth2.ErrPrivateAddress). The client sees only the 400 of the failed
// step, like any provider failure; it is a configuration matter, so the
// log says how to allow it. One line every capLogEvery at most, with the
// count: anyone can ask for sign-ins.
func (s *Server) logPrivateProvider(err error) {
	s.privateLogMu.Lock()
	refused, ok := s.privateLog.event()
	s.privateLogMu.Unlock()
	if ok {
		s.log.Warn("OAuth2 sign-in refused: the provider's address is private; set STRONGBOX_OAUTH2_ALLOW_PRIVATE=1 to allow it",
			"refused", refused, "err", err)
	}
}

// resolveOAuth2 finds, links or creates the record of c that the
// provider's user signs in to (authn.Store.SignInOAuth2), email being the
// user's verified email or "". A sign-up is subject to c's createRule.
func (s *Server) resolveOAuth2(r *http.Request, c *authn.Collection, in *oauth2Request, user *oauth2.User, email string) (*authn.Record, bool, error) {
	st := stateOf(r)
	var authed *authn.Record
	if st.rec != nil && st.col.ID == c.ID {
		authed = st.rec
	}
	rec, isNew, err := s.auth.SignInOAuth2(r.Context(), c, authn.OAuth2SignIn{
		Identity: authn.OAuth2Identity{Provider: in.provider.Name, ID: user.ID, Name: user.Name,
			Username: user.Username, Email: email, AvatarURL: user.AvatarURL},
		Authed:     authed,
		CreateData: in.createData,
		Superuser:  st.isSuperuser(),
		MayCreate: func(vals map[string]any) error {
			if c.CreateRule == nil && !st.isSuperuser() {
				return errForbidden(msgSuperusersOnly)
			}
			req := ruleRequest(r, vals, authn.ContextOAuth2)
			if err := s.ruleAllows(r, c, authn.RuleCreate, s.auth.DraftRecord(c, vals), req); err != nil {
				return errBadRequest(msgCreateFailed, err)
			}
			return nil
		},
	})
	if data := validationData(err); data != nil {
		return nil, false, errValidation(msgCreateFailed, data)
	}
	switch {
	case errors.Is(err, authn.ErrNotFound):
		return nil, false, errNotFound(err)
	case errors.Is(err, authn.ErrOAuth2Off):
		return nil, false, errForbidden(msgOAuth2Off)
	case errors.Is(err, authn.ErrLinkConflict):
		return nil, false, errBadRequest(msgAuthFailed, err)
	case err != nil:
		return nil, false, err
	}
	return rec, isNew, nil
}

// oauth2Meta is the meta of an OAuth2 sign-in's result: the provider's
// user with exactly PocketBase v0.31.0's keys, the email only when the
// provider verified it.
func oauth2Meta(u *oauth2.User, email string, isNew bool) map[string]any {
	raw := u.Raw
	if raw == nil {
		raw = map[string]any{}
	}
	return map[string]any{
		"id": u.ID, "name": u.Name, "username": u.Username, "email": email,
		"avatarURL": u.AvatarURL, "avatarUrl": u.AvatarURL,
		"accessToken": u.AccessToken, "refreshToken": u.RefreshToken,
		"expiry": authn.Time{Time: u.Expiry}, "isNew": isNew, "rawUser": raw,
	}
}
