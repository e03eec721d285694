package authn

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"strongbox/authn/validation"
)

// The account flows, as in PocketBase v0.31.0 (the interface document is
// silent on them): a mail carries a token of type verification,
// passwordReset or emailChange; confirming it verifies the record, sets its
// password or sets its email. Each token is signed with the record's token
// key and the collection's secret for its type, and carries the email it
// was sent for (and, for an email change, the new one). Setting the
// password or the email rotates the token key, so a confirmed reset or
// email-change token, and every other token of the record, stops
// verifying: tokens are single-use in effect, with no state kept for them.
//
// Each flow is a pair of Store methods, in a file of its own: a request,
// which returns the token to mail (a TokenMail), and a confirm, which takes
// the token back and makes the change.
//
//   - flow_verification.go: RequestVerification and VerifyEmail
//   - flow_passwordreset.go: RequestPasswordReset and ConfirmPasswordReset
//   - flow_emailchange.go: RequestEmailChange and ConfirmEmailChange
//
// A flow owns its policy: the checks of its input in PocketBase's order,
// what hides whether an email has an account (a stand-in record for an
// unknown email gets the same work), the resend throttle and the change
// itself. Its caller decodes the request, applies its rate limits, renders
// and sends the mail, and turns the errors into answers. A new flow (TOTP
// enrolment, passkeys) goes in a file of its own, flow_<name>.go, built
// the same way from what this file shares: the tokens (signFlow), the
// token checks, the stand-in, the resend throttle and changeRecord.

// Errors of the account flows.
var (
	// ErrInvalidInput wraps the validation.Errors of a flow's input,
	// field by field, as the request form reports them.
	ErrInvalidInput = errors.New("authn: invalid input")
	// ErrTokenStale: the record changed (its token key or email) between
	// the token's verification and the change it confirms.
	ErrTokenStale = errors.New("authn: the record changed since its token was verified")
	// ErrEmailTaken: another record of the collection has the email.
	ErrEmailTaken = errors.New("authn: the email belongs to another record")
)

// invalidInput is the error of a flow's input that fails errs.
func invalidInput(errs validation.Errors) error {
	return fmt.Errorf("%w: %w", ErrInvalidInput, errs)
}

// TokenMail is the mail a request of an account flow calls for: the
// flow's token, signed for Record, to be sent to To. A request for an
// email no record has gets one too, for a stand-in record, so that its
// caller does the same work for it (renders the mail) and then sends
// nothing: Send tells whether to send. After an attempt to send, the
// caller reports its outcome with Sent.
type TokenMail struct {
	Record *Record // the record, or the stand-in of an email no record has
	Token  string
	To     string
	Send   bool
	sent   func(err error) // nil: nothing to record
}

// Sent reports the outcome of an attempt to send m (err: the transport's
// answer), for the flow's resend throttle. It is a no-op for a mail that
// was not to be sent and for a flow without a throttle.
func (m *TokenMail) Sent(err error) {
	if m.sent != nil {
		m.sent(err)
	}
}

// standIn stands in for the record of an email no record of c has, so
// that a request for it signs a token and renders a mail just as for a
// known one.
func standIn(c *Collection, email string) *Record {
	return &Record{ID: "000000000000000", CollectionID: c.ID, Email: email,
		TokenKey: "00000000000000000000000000000000000000000000000000"}
}

// requestByEmail is the start of a request that names its record by email
// (verification, password reset): the record of c with exactly this email,
// or, for an email no record has (found false), a stand-in.
func (s *Store) requestByEmail(c *Collection, email string) (r *Record, found bool) {
	if r, found = s.FindByEmail(c, email); !found {
		r = standIn(c, email)
	}
	return r, found
}

// NewVerificationToken issues a verification token for record r of c,
// bound to r's current email.
func (s *Store) NewVerificationToken(c *Collection, r *Record) (string, error) {
	return s.signFlow(c, r, TokenVerification, "")
}

// NewPasswordResetToken issues a password-reset token for record r of c,
// bound to r's current email.
func (s *Store) NewPasswordResetToken(c *Collection, r *Record) (string, error) {
	return s.signFlow(c, r, TokenPasswordReset, "")
}

// NewEmailChangeToken issues a token that changes the email of record r
// of c to newEmail.
func (s *Store) NewEmailChangeToken(c *Collection, r *Record, newEmail string) (string, error) {
	return s.signFlow(c, r, TokenEmailChange, newEmail)
}

// signFlow signs a token of an account flow. These tokens always expire:
// after the collection's duration for the type, or PocketBase's default
// if that is somehow unset.
func (s *Store) signFlow(c *Collection, r *Record, typ TokenType, newEmail string) (string, error) {
	d := c.Token(typ).Duration
	if d <= 0 {
		d = defaultTokenDuration(c, typ)
	}
	exp := s.now().Add(time.Duration(d) * time.Second).Unix()
	claims := Claims{CollectionID: c.ID, Email: r.Email, Exp: &exp, ID: r.ID, NewEmail: newEmail, Type: typ}
	return Sign(claims, signingKey(c, r, typ))
}

// checkFlowToken checks a verification or password-reset token for
// collection c in PocketBase's order, and returns the record it names as
// it was verified, and the token's claims. The failures are those of the
// token field.
func (s *Store) checkFlowToken(c *Collection, token string, typ TokenType) (*Record, *Claims, *validation.Error) {
	if token == "" {
		return nil, nil, errRequired
	}
	var email string
	if typ == TokenVerification {
		// PocketBase reads the claim before anything else, so a token
		// that does not even parse lacks it too.
		if p, err := ParseUnverified(token); err == nil {
			email = p.Claims.Email
		}
		if email == "" {
			return nil, nil, validation.TokenMissingEmail()
		}
	}
	tc, rec, claims, err := s.VerifyToken(token, typ)
	if err != nil {
		return nil, nil, validation.InvalidToken()
	}
	if tc.ID != c.ID {
		return nil, nil, validation.TokenCollectionMismatch()
	}
	if typ == TokenVerification && rec.Email != email {
		return nil, nil, validation.TokenEmailMismatch()
	}
	return rec, claims, nil
}

// CheckPassword reports whether password is the password of r. A nil r
// never matches but costs the same bcrypt work, so that the answer's time
// does not tell whether there was a record.
func (s *Store) CheckPassword(ctx context.Context, r *Record, password string) (bool, error) {
	hash := ""
	if r != nil {
		hash = r.PasswordHash
	}
	return s.hasher.Check(ctx, hash, password)
}

// changeRecord applies change to a copy of the current state of record r
// of c and commits it durably (fsynced before it returns), under the
// store's lock. r is the record as a token was verified against: if the
// record's token key or email has changed since, the token no longer
// holds and the change is ErrTokenStale. change reports whether there is
// anything to write; it runs with s.mu held.
func (s *Store) changeRecord(c *Collection, r *Record, change func(n *Record) (bool, error)) (*Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cols[c.ID]; !ok {
		return nil, ErrNotFound
	}
	cur, ok := s.byCol[c.ID][r.ID]
	if !ok {
		return nil, ErrNotFound
	}
	if cur.TokenKey != r.TokenKey || cur.Email != r.Email {
		return nil, ErrTokenStale
	}
	n := cur.clone()
	write, err := change(n)
	if err != nil || !write {
		return cur, err
	}
	n.Updated = s.now().UTC()
	if err := s.commit(&op{Op: "record", Record: n}); err != nil {
		return nil, err
	}
	return n, nil
}

// ResendWindow is how long after a verification or password-reset mail to
// a record another request sends none (PocketBase's in-memory throttle).
const ResendWindow = 2 * time.Minute

// resendGuard remembers, in memory, which records were recently sent a
// verification or password-reset mail. Entries expire after ResendWindow
// and are pruned as new ones are added, so it holds at most about twice
// the records mailed in the last two minutes.
type resendGuard struct {
	mu      sync.Mutex
	sent    map[string]time.Time // token type + " " + collection id + " " + record id → when
	pruneAt int                  // prune expired entries when sent reaches this size
}

func resendKey(typ TokenType, c *Collection, r *Record) string {
	return string(typ) + " " + c.ID + " " + r.ID
}

// recent reports whether key was marked less than ResendWindow before now.
func (g *resendGuard) recent(key string, now time.Time) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	t, ok := g.sent[key]
	return ok && now.Sub(t) < ResendWindow && !now.Before(t)
}

// mark records that key was mailed at now.
func (g *resendGuard) mark(key string, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sent == nil {
		g.sent = map[string]time.Time{}
	}
	if len(g.sent) >= g.pruneAt {
		// Pruned when the map has doubled since the last pruning, so
		// that each mark costs O(1) amortised however many records are
		// mailed.
		for k, t := range g.sent {
			if now.Sub(t) >= ResendWindow || now.Before(t) {
				delete(g.sent, k)
			}
		}
		g.pruneAt = max(64, 2*len(g.sent))
	}
	g.sent[key] = now
}

// forget removes key (a verified record needs no more reminders).
func (g *resendGuard) forget(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.sent, key)
}
