package authn

import (
	"context"
	"time"
)

// signingKey is the HMAC key of a token of type typ for record r: the record's
// token key followed by the collection's secret for that type. Rotating the
// token key ends every token of the record; changing a secret ends every
// token of that type in the collection.
func signingKey(c *Collection, r *Record, typ TokenType) []byte {
	return []byte(r.TokenKey + c.Token(typ).Secret)
}

// DefaultStaticTokenDuration is the lifetime of a non-refreshable token
// (impersonation) when neither the caller nor the collection sets one.
const DefaultStaticTokenDuration = 7 * 24 * time.Hour

// NewAuthToken issues an auth token for record r of c. A zero duration means
// the collection's authToken duration. Only a refreshable (password) token
// of the users collection, whose configured duration is 0, carries no exp
// (§5.9 of the interface document); every other token expires: a static
// token, which cannot be refreshed, after DefaultStaticTokenDuration when
// nothing sets its lifetime, and a password token of another collection
// whose stored duration is somehow 0 after PocketBase's default.
func (s *Store) NewAuthToken(c *Collection, r *Record, refreshable bool, d time.Duration) (string, error) {
	if d <= 0 {
		d = time.Duration(c.AuthToken.Duration) * time.Second
	}
	switch {
	case d > 0:
	case !refreshable:
		d = DefaultStaticTokenDuration
	case !staticAllowed(c, TokenAuth, 0):
		d = defaultAuthDuration(c) * time.Second
	}
	return s.sign(c, r, TokenAuth, d, &refreshable)
}

// defaultAuthDuration is PocketBase's default authToken duration of c, in
// seconds.
func defaultAuthDuration(c *Collection) time.Duration {
	if c.IsSuperusers() {
		return 86400
	}
	return 604800
}

// NewFileToken issues a file token (for protected downloads) for record r of c.
func (s *Store) NewFileToken(c *Collection, r *Record) (string, error) {
	return s.sign(c, r, TokenFile, time.Duration(c.FileToken.Duration)*time.Second, nil)
}

func (s *Store) sign(c *Collection, r *Record, typ TokenType, d time.Duration, refreshable *bool) (string, error) {
	claims := Claims{CollectionID: c.ID, ID: r.ID, Type: typ, Refreshable: refreshable}
	if d > 0 {
		exp := s.now().Add(d).Unix()
		claims.Exp = &exp
	}
	return Sign(claims, signingKey(c, r, typ))
}

// VerifyToken checks token for use as type typ and returns the collection
// and record it authenticates. The checks, in order: strict parsing (three
// unpadded base64url segments, HS256 only); the unverified collectionId and
// id are used only to find the record and the key; the signature is checked
// in constant time with the key of the expected type (so a token of another
// type can never verify); then the claims are trusted: type, and expiry.
// A token without exp is accepted only for the users collection while its
// authToken duration is 0 (§5.9).
func (s *Store) VerifyToken(token string, typ TokenType) (*Collection, *Record, *Claims, error) {
	p, err := ParseUnverified(token)
	if err != nil {
		return nil, nil, nil, err
	}
	s.mu.RLock()
	c, ok := s.collection(p.Claims.CollectionID)
	var r *Record
	if ok {
		r, ok = s.byCol[c.ID][p.Claims.ID]
	}
	s.mu.RUnlock()
	if !ok || !c.IsAuth() {
		return nil, nil, nil, ErrTokenRecord
	}
	if err := p.Verify(signingKey(c, r, typ)); err != nil {
		return nil, nil, nil, err
	}
	if p.Claims.Type != typ {
		return nil, nil, nil, ErrTokenType
	}
	if p.Claims.Exp == nil && !staticAllowed(c, typ, c.AuthToken.Duration) {
		// A token without exp is valid only while its collection's
		// tokens are static: it cannot outlive that setting.
		return nil, nil, nil, ErrTokenExpired
	}
	if p.Claims.Exp != nil && s.now().Unix() >= *p.Claims.Exp {
		return nil, nil, nil, ErrTokenExpired
	}
	return c, r, &p.Claims, nil
}

// AuthWithPassword finds the record of c whose identity field (the named
// one, or any of the collection's identity fields, email first) equals
// identity and checks its password. Unknown identities and wrong passwords
// both return ErrAuthFailed after the same amount of bcrypt work.
func (s *Store) AuthWithPassword(ctx context.Context, c *Collection, identity, identityField, password string) (*Record, error) {
	if !c.IsAuth() {
		return nil, ErrNotAuthCollection
	}
	if !c.PasswordAuth.Enabled {
		return nil, ErrPasswordAuthOff
	}
	fields := c.identityFields()
	if identityField != "" {
		fields = []string{identityField}
	}
	var r *Record
	s.mu.RLock()
	for _, f := range fields {
		if f == "email" && !ValidEmail(identity) {
			continue
		}
		if found, ok := s.findByField(c, f, identity); ok {
			r = found
			break
		}
	}
	decoy := s.decoyCost(c)
	s.mu.RUnlock()
	hash := ""
	if r != nil {
		hash = r.PasswordHash
	}
	ok, err := s.hasher.check(ctx, hash, password, decoy)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrAuthFailed
	}
	return r, nil
}
