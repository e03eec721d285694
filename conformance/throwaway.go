package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// The superuser a run works as: a throwaway of its own, so that the
// superuser the suite is given signs in once per run, and the sign-ins
// the checks make (AUTH-PW-001, -002, …) are the throwaway's. On
// PocketBase a sign-in from a device a record has not used mails it the
// new-login alert; the throwaway's first sign-in mails nothing (a
// record's first sign-in never does), nor do the later ones from the same
// device, and its address is under a reserved domain (RFC 2606 .invalid)
// that no mail reaches.

// throwawayDomain is the domain of the throwaway superusers' emails.
const throwawayDomain = "conformance.invalid"

// throwawayEmail matches a throwaway superuser's email and captures the
// Unix time after which it is a leftover: cf-su-<expiry>-<random>@…
var throwawayEmail = regexp.MustCompile(`^cf-su-([0-9]{1,12})-[a-z0-9]{8}@` + regexp.QuoteMeta(throwawayDomain) + `$`)

// throwawayLife is how long a throwaway outlives the end of its run's
// context (its deadline, or when it has none the start of the run): a run
// killed before it could delete its own leaves it behind, and the first run
// after that time deletes it.
const throwawayLife = time.Hour

// throwaway is the superuser a run created for itself.
type throwaway struct {
	id, email string
}

// useThrowaway makes c work as a new throwaway superuser: it deletes the
// leftovers of earlier runs, creates the throwaway with the given
// superuser's token, signs it in and makes it c's superuser. It returns
// the throwaway, to be deleted with dropThrowaway.
func (c *Client) useThrowaway(ctx context.Context, now time.Time) (*throwaway, error) {
	c.dropLeftovers(ctx, now)
	end := now
	if d, ok := ctx.Deadline(); ok && d.After(now) {
		end = d
	}
	tw := &throwaway{email: fmt.Sprintf("cf-su-%d-%s@%s", end.Add(throwawayLife).Unix(), newNonce(8), throwawayDomain)}
	password := "Cf-" + newNonce(28)
	r, err := c.do(ctx, http.MethodPost, "/api/collections/_superusers/records", c.given,
		map[string]string{"email": tw.email, "password": password, "passwordConfirm": password})
	if err != nil {
		return nil, fmt.Errorf("creating a throwaway superuser: %w", err)
	}
	var rec struct {
		ID string `json:"id"`
	}
	if r.status != http.StatusOK || json.Unmarshal(r.body, &rec) != nil || rec.ID == "" {
		return nil, fmt.Errorf("creating a throwaway superuser: POST /api/collections/_superusers/records answered %s", r)
	}
	tw.id = rec.ID
	res, err := c.login(ctx, "_superusers", tw.email, password)
	if err != nil {
		if derr := c.dropThrowaway(ctx, tw); derr != nil {
			err = fmt.Errorf("%w; %v", err, derr)
		}
		return nil, fmt.Errorf("signing in as the throwaway superuser: %w", err)
	}
	c.email, c.password, c.su = tw.email, password, res.token
	return tw, nil
}

// dropThrowaway deletes tw with the given superuser's token, under a
// context of its own, so that it also happens when the run's has ended.
func (c *Client) dropThrowaway(ctx context.Context, tw *throwaway) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	r, err := c.do(ctx, http.MethodDelete, "/api/collections/_superusers/records/"+seg(tw.id), c.given, nil)
	if err != nil {
		return fmt.Errorf("deleting the throwaway superuser %s: %w", tw.email, err)
	}
	if r.status != http.StatusNoContent && r.status != http.StatusNotFound {
		return fmt.Errorf("deleting the throwaway superuser %s: expected 204, got %s", tw.email, r)
	}
	return nil
}

// dropLeftovers deletes the throwaway superusers of earlier runs whose
// time has passed (a run killed before it deleted its own); those of runs
// still going are kept. What it cannot list or delete stays, for a later
// run.
func (c *Client) dropLeftovers(ctx context.Context, now time.Time) {
	q := query("filter", "email ~ '%@"+throwawayDomain+"'", "perPage", "200", "fields", "id,email")
	r, err := c.get(ctx, withQuery("/api/collections/_superusers/records", q), c.given)
	if err != nil || r.status != http.StatusOK {
		return
	}
	var list struct {
		Items []struct {
			ID    string `json:"id"`
			Email string `json:"email"`
		} `json:"items"`
	}
	if json.Unmarshal(r.body, &list) != nil {
		return
	}
	for _, it := range list.Items {
		m := throwawayEmail.FindStringSubmatch(it.Email)
		if m == nil {
			continue
		}
		if exp, err := strconv.ParseInt(m[1], 10, 64); err == nil && now.Unix() > exp {
			c.dropThrowaway(ctx, &throwaway{id: it.ID, email: it.Email})
		}
	}
}
