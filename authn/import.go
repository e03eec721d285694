package authn

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The import entry points move the auth data of another server (a
// PocketBase data dir, see package backup/pbimport) into a store as it was
// there: ids, dates, token secrets, password hashes and token keys are
// kept, so that every account signs in with its old password and every
// token the other server issued stays valid (the signing key of a token
// is the record's token key followed by the collection's secret, as
// PocketBase signs them). Each entry point validates what it imports as
// the API would, and refuses or skips what fails rather than storing it
// half; records and links are committed many per journal frame.

// ErrImportSkipped wraps the reason an imported record, link or origin
// was skipped (see ImportSkip).
var ErrImportSkipped = errors.New("authn: import: skipped")

// ImportSkip is an imported item that was not stored, and why: Reason is
// short and the same for the same cause (the validation failure, with the
// field it names), so that callers may count skips by it.
type ImportSkip struct {
	ID     string
	Reason string
}

// ImportCollection stores an auth collection moved from another server.
// in is the collection in PocketBase's JSON shape (the collection API's);
// unlike CreateCollection it keeps in's id and its token and OAuth2
// client secrets, and created and updated when they are not zero. The _superusers
// collection (by its id or name), which every store has, is updated with
// in's options instead (UpdateCollection, which keeps its invariants).
// Validation is the API's: a validation.Errors refuses the collection.
func (s *Store) ImportCollection(in CollectionInput, created, updated Time) (*Collection, error) {
	id, _ := in.Values["id"].(string)
	name, _ := in.Values["name"].(string)
	if id == SuperusersID || name == SuperusersName {
		v := maps.Clone(in.Values)
		v["id"] = SuperusersID
		delete(v, "name")
		delete(v, "system")
		return s.UpdateCollection(s.Superusers(), CollectionInput{Values: v})
	}
	return s.createCollection(in, created, updated)
}

// ImportRecords stores records of the auth collection c moved from
// another server, as they are: id, email, emailVisibility, verified, the
// password hash (a bcrypt hash, never re-hashed: the old password keeps
// working), token key, created, updated and the values of c's own fields
// (JSON types: string, float64, bool, nil; normalised as the API
// normalises them). A record that fails validation (the id's format, the
// email, the hash, the token key, a field's value) or whose id, email,
// token key or identity field another record of c has is skipped and
// reported, never stored in part. The records stored are committed as one journal frame; a
// caller imports a large collection in batches.
func (s *Store) ImportRecords(c *Collection, recs []*Record) ([]ImportSkip, error) {
	if !c.IsAuth() {
		return nil, ErrNotAuthCollection
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cols[c.ID] != c {
		return nil, ErrNotFound
	}
	var skips []ImportSkip
	ops := make([]*op, 0, len(recs))
	s.indexTokenKeys(c)
	stored := s.importIndex(c)
	taken := map[string]bool{} // the keys of the records of this batch
	for _, in := range recs {
		r, err := s.importRecord(c, in, stored, taken)
		if err != nil {
			skips = append(skips, ImportSkip{ID: in.ID, Reason: err.Error()})
			continue
		}
		ops = append(ops, &op{Op: "record", Record: r})
	}
	if len(ops) == 0 {
		return skips, nil
	}
	return skips, s.commit(ops...)
}

// importIndex returns the identity-field values (name + ":" + value) of
// c's records, for the identity fields other than email and id, which
// the store does not index; nil when c has none. The caller holds s.mu.
func (s *Store) importIndex(c *Collection) map[string]bool {
	if !slices.ContainsFunc(c.PasswordAuth.IdentityFields, func(name string) bool { return name != "email" && name != "id" }) {
		return nil // no need to walk the records of every batch again
	}
	var taken map[string]bool
	for _, r := range s.byCol[c.ID] {
		for _, k := range uniqueKeys(c, r)[1:] {
			if taken == nil {
				taken = map[string]bool{}
			}
			taken[k] = true
		}
	}
	return taken
}

// indexTokenKeys builds the count of c's records by token key
// (s.tokenKeys), which apply then keeps, unless there is one: PocketBase's
// index of tokenKey is unique, and so are the keys an import stores. Only
// the collections imported into have one. The caller holds s.mu for
// writing.
func (s *Store) indexTokenKeys(c *Collection) {
	if s.tokenKeys[c.ID] != nil {
		return
	}
	m := make(map[string]int, len(s.byCol[c.ID]))
	for _, r := range s.byCol[c.ID] {
		m[r.TokenKey]++
	}
	s.tokenKeys[c.ID] = m
}

// countTokenKey adds d (1 or -1) to the count of r's token key in its
// collection, if the collection has a count (indexTokenKeys). The caller
// holds s.mu for writing.
func (s *Store) countTokenKey(r *Record, d int) {
	m := s.tokenKeys[r.CollectionID]
	if m == nil {
		return
	}
	if m[r.TokenKey] += d; m[r.TokenKey] <= 0 {
		delete(m, r.TokenKey)
	}
}

// uniqueKeys returns the keys of r that must be unique within c: "email:"
// + its email first, then name + ":" + value for each of its other
// identity fields that is set.
func uniqueKeys(c *Collection, r *Record) []string {
	keys := []string{"email:" + r.Email}
	for _, name := range c.PasswordAuth.IdentityFields {
		if name == "email" || name == "id" {
			continue
		}
		if v, _ := r.Fields[name].(string); v != "" {
			keys = append(keys, name+":"+v)
		}
	}
	return keys
}

// importRecord validates the imported record in against c, the store,
// the identity-field values stored (importIndex) and the keys the batch
// has taken (uniqueKeys, "id:" + id and "tokenKey:" + token key), and
// returns the record to store, its keys now taken. The caller holds s.mu.
func (s *Store) importRecord(c *Collection, in *Record, stored, taken map[string]bool) (*Record, error) {
	r := in.clone()
	r.CollectionID = c.ID
	r.Created, r.Updated = r.Created.UTC(), r.Updated.UTC()
	if c.IsSuperusers() {
		r.Verified = true // as the API keeps them
	}
	skip := func(format string, a ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrImportSkipped}, a...)...)
	}
	idf := c.Field("id")
	switch {
	case r.ID == "":
		return nil, skip("id: missing")
	case idf != nil && idf.checkText(r.ID) != nil:
		return nil, skip("id: %s", idf.checkText(r.ID).Message)
	case idf == nil && !ValidID(r.ID):
		return nil, skip("id: %s", errFormat.Message)
	case taken["id:"+r.ID] || s.recs[r.ID] != nil:
		return nil, skip("id: another record has it")
	}
	if e := checkEmail(r.Email); e != nil {
		return nil, skip("email: %s", e.Message)
	}
	if !isBcrypt(r.PasswordHash) {
		return nil, skip("password: not a bcrypt hash")
	}
	if n := len(r.TokenKey); n < 30 || n > 255 {
		return nil, skip("tokenKey: not 30 to 255 characters")
	}
	fields := map[string]any{}
	for _, f := range c.ownFields() {
		v, e := f.normalize(r.Fields[f.Name])
		if e != nil {
			return nil, skip("%s: %s", f.Name, e.Message)
		}
		fields[f.Name] = v
	}
	r.Fields = fields
	keys := uniqueKeys(c, r)
	if _, ok := s.byEmail[c.ID][r.Email]; ok {
		return nil, skip("email: another record has it")
	}
	if taken["tokenKey:"+r.TokenKey] || s.tokenKeys[c.ID][r.TokenKey] > 0 {
		return nil, skip("tokenKey: another record has it")
	}
	for _, k := range keys {
		if taken[k] || stored[k] {
			return nil, skip("%s: another record has it", k[:strings.IndexByte(k, ':')])
		}
	}
	taken["id:"+r.ID], taken["tokenKey:"+r.TokenKey] = true, true
	for _, k := range keys {
		taken[k] = true
	}
	return r, nil
}

// isBcrypt reports whether h has the form of a bcrypt hash: $2a$, $2b$
// or $2y$, a two-digit cost, then 53 characters of bcrypt's base64.
func isBcrypt(h string) bool {
	if len(h) != 60 || h[0] != '$' || h[1] != '2' || h[3] != '$' || h[6] != '$' || !strings.ContainsRune("aby", rune(h[2])) {
		return false
	}
	if h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' {
		return false
	}
	const alphabet = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	for i := 7; i < len(h); i++ {
		if !strings.ContainsRune(alphabet, rune(h[i])) {
			return false
		}
	}
	return true
}

// ImportExternalAuths stores OAuth2 links moved from another server, with
// their ids and dates, as one journal frame. A link is skipped (and
// reported) when its record is not in the store under its collection, its
// provider is not one strongbox knows, or its id, identity (collection,
// provider, provider id) or (record, provider) is already taken.
func (s *Store) ImportExternalAuths(links []*ExternalAuth) ([]ImportSkip, error) {
	return s.importEach(len(links), func(i int, seen map[string]bool) (string, string, *op) {
		l := *links[i]
		l.Created, l.Updated = l.Created.UTC(), l.Updated.UTC()
		identity := identityKey(l.CollectionID, l.Provider, l.ProviderID)
		perRecord := l.RecordID + "\x00" + l.Provider
		var why string
		switch r, ok := s.recs[l.RecordID]; {
		case l.ID == "" || l.ProviderID == "":
			why = "id or providerId missing"
		case !ok || r.CollectionID != l.CollectionID:
			why = "its record was not imported"
		case !KnownProvider(l.Provider):
			why = fmt.Sprintf("unknown provider %q", l.Provider)
		case s.links[l.ID] != nil || seen["id:"+l.ID]:
			why = "another link has its id"
		case s.linkByIdentity[identity] != nil || seen[identity]:
			why = "another link has its provider identity"
		case s.recLinks[l.RecordID][l.Provider] != nil || seen[perRecord]:
			why = "its record has another link to the provider"
		default:
			seen["id:"+l.ID], seen[identity], seen[perRecord] = true, true, true
		}
		return l.ID, why, &op{Op: "externalAuth", ExternalAuth: &l}
	})
}

// ImportAuthOrigins stores sign-in origins moved from another server,
// with their ids and dates, as one journal frame. An origin is skipped
// (and reported) when its record is not in the store under its
// collection, or its id or (record, fingerprint) is already taken.
func (s *Store) ImportAuthOrigins(origins []*AuthOrigin) ([]ImportSkip, error) {
	return s.importEach(len(origins), func(i int, seen map[string]bool) (string, string, *op) {
		o := *origins[i]
		o.Created, o.Updated = o.Created.UTC(), o.Updated.UTC()
		key := o.RecordID + "\x00" + o.Fingerprint
		var why string
		switch r, ok := s.recs[o.RecordID]; {
		case o.ID == "" || o.Fingerprint == "":
			why = "id or fingerprint missing"
		case !ok || r.CollectionID != o.CollectionID:
			why = "its record was not imported"
		case s.origins[o.ID] != nil || seen["id:"+o.ID]:
			why = "another origin has its id"
		case seen[key] || s.hasOrigin(o.RecordID, o.Fingerprint):
			why = "its record has another origin with the fingerprint"
		default:
			seen["id:"+o.ID], seen[key] = true, true
		}
		return o.ID, why, &op{Op: "authOrigin", AuthOrigin: &o}
	})
}

// importEach commits, as one journal frame, the ops item returns for the
// items 0 to n-1, under s.mu, except those it gives a reason to skip:
// item returns the item's id, why it is skipped ("" to store it) and its
// op, and notes in seen (shared by the calls) the keys the item takes.
func (s *Store) importEach(n int, item func(i int, seen map[string]bool) (id, why string, o *op)) ([]ImportSkip, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var skips []ImportSkip
	var ops []*op
	seen := map[string]bool{}
	for i := range n {
		id, why, o := item(i, seen)
		if why != "" {
			skips = append(skips, ImportSkip{ID: id, Reason: why})
			continue
		}
		ops = append(ops, o)
	}
	if len(ops) == 0 {
		return skips, nil
	}
	return skips, s.commit(ops...)
}

// hasOrigin reports whether record recID has an origin with fingerprint
// fp. The caller holds s.mu.
func (s *Store) hasOrigin(recID, fp string) bool {
	for _, o := range s.recOrigins[recID] {
		if o.Fingerprint == fp {
			return true
		}
	}
	return false
}
