package authn

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"strongbox/logstore/journal"
)

// Store errors.
var (
	ErrNotFound          = errors.New("authn: not found")
	ErrAuthFailed        = errors.New("authn: invalid identity or password")
	ErrLastSuperuser     = errors.New("authn: the only superuser cannot be deleted")
	ErrSystemCollection  = errors.New("authn: system collections cannot be deleted")
	ErrPasswordAuthOff   = errors.New("authn: password authentication is disabled")
	ErrNotAuthCollection = errors.New("authn: not an auth collection")
)

// defaultCompactAt is the journal size from which a store compacts when the
// journal has grown to four times its live data.
const defaultCompactAt = 1 << 20

// probeInterval is how often, at most, Health probes the disk of a degraded
// store for free space.
const probeInterval = time.Second

// Options configure a Store.
type Options struct {
	Now    func() time.Time // nil = time.Now
	Rand   io.Reader        // nil = crypto/rand
	Hasher *Hasher          // required
	Logger *slog.Logger     // nil = discard
	FS     journal.FS       // the journal's file system; nil = journal.OS (tests inject faults)
	// SweepEvery is how often expired OTPs and MFA sessions are deleted
	// (Sweep); 0 = hourly, as PocketBase does, < 0 = never (they are
	// refused once expired and left out of compaction all the same).
	SweepEvery time.Duration
}

// Store holds the auth collections and their records. It keeps everything
// in memory and persists every change to an append-only journal (fsynced
// before the change is acknowledged), replayed at start and compacted now and
// then. It is safe for concurrent use.
type Store struct {
	now    func() time.Time
	rnd    *Random
	hasher *Hasher
	log    *slog.Logger

	mu             sync.RWMutex // guards everything below; writers also hold it across the journal append
	j              *journal.File
	compactAt      int64
	noCompact      time.Time                           // no compaction before this, after one failed (compactBackoff)
	live           int64                               // bytes of the latest frame of each live object
	sizes          map[string]int64                    // frame size of each object's latest state, by key
	cols           map[string]*Collection              // by id
	recs           map[string]*Record                  // by id, across all collections
	byCol          map[string]map[string]*Record       // collection id → record id → record
	byEmail        map[string]map[string]*Record       // collection id → email → record
	hashCosts      map[string]*hashCosts               // collection id → its records' hashes by bcrypt cost (decoyCost)
	tokenKeys      map[string]map[string]int           // collection id → token key → records with it; built by ImportRecords
	colOrder       []string                            // collection ids in creation order
	otps           map[string]*otpEntry                // OTPs by id
	recOTPs        map[string]map[string]*otpEntry     // record id → OTP id → OTP
	mfas           map[string]*mfaEntry                // MFA sessions by id
	decoys         map[string][]decoyOTP               // collection id + "\x00" + unknown email → ids answered (DecoyOTP)
	links          map[string]*ExternalAuth            // OAuth2 links by id
	linkByIdentity map[string]*ExternalAuth            // by identityKey(collection, provider, provider id)
	recLinks       map[string]map[string]*ExternalAuth // record id → provider → link
	origins        map[string]*AuthOrigin              // sign-in origins by id
	recOrigins     map[string]map[string]*AuthOrigin   // record id → origin id → origin
	totps          map[string]*totpEntry               // authenticators by record id
	totpFails      map[string]*failWindow              // record id → its wrong TOTP codes (memory only)

	resend resendGuard // the account flows' resend throttle (flows.go)
	pk     passkeys    // passkeys and their challenges (passkey.go)

	pending   sync.WaitGroup // OTP writes and mails started by RequestOTP; Close waits for them
	stopSweep func()         // stops the sweeper; nil when none runs

	// apiRules are the compiled API rules and mfa.rule per collection,
	// compiled when a collection is stored; its own lock, taken after s.mu.
	apiRules apiRuleCache
	// sorted caches each collection's records in list order, as
	// sortedRecords returns them, until one of them changes; its own
	// lock, taken after s.mu (a read lock suffices to fill it).
	sortMu sync.Mutex
	sorted map[string][]*Record

	probeMu   sync.Mutex // guards lastProbe
	lastProbe time.Time
}

// op is one change: the new full state of an object, or its deletion. A
// journal frame holds the JSON array of the ops of one commit, so a commit
// is all or nothing even when it changes several objects, and a torn write
// can only ever be a torn last frame.
//
// V is the op's format version (opVersion when written; see "Journal
// records" in the package doc), so that a later change of the format can
// tell old ops from new ones and migrate them. An op without it was
// written before the field existed, in version 1.
type op struct {
	V            int           `json:"v"`
	Op           string        `json:"op"` // "collection", "deleteCollection", "record", "deleteRecord", "otp", "deleteOTP", "mfa", "deleteMFA", "externalAuth", "deleteExternalAuth", "authOrigin", "deleteAuthOrigin", "totp", "deleteTOTP", "passkey", "deletePasskey"
	Collection   *Collection   `json:"collection,omitempty"`
	Record       *Record       `json:"record,omitempty"`
	OTP          *otpEntry     `json:"otp,omitempty"`
	MFA          *mfaEntry     `json:"mfa,omitempty"`
	ExternalAuth *ExternalAuth `json:"externalAuth,omitempty"`
	AuthOrigin   *AuthOrigin   `json:"authOrigin,omitempty"`
	TOTP         *totpEntry    `json:"totp,omitempty"`
	Passkey      *Passkey      `json:"passkey,omitempty"`
	ID           string        `json:"id,omitempty"`
}

// opVersion is the format version of the ops this strongbox writes, and
// the newest it reads.
const opVersion = 1

// check rejects an op that names no object, so that a damaged or foreign
// journal is refused instead of crashing the replay, and an op of a newer
// format than this strongbox reads, so that it is not misread.
func (o *op) check() error {
	switch {
	case o == nil:
		return errors.New("empty change")
	case o.V > opVersion:
		return fmt.Errorf("format version %d, but this strongbox reads versions up to %d: run a newer strongbox on this data dir", o.V, opVersion)
	case o.V < 0:
		return fmt.Errorf("invalid format version %d", o.V)
	case o.Op == "collection" && o.Collection != nil && o.Collection.ID != "" && o.Collection.Name != "":
	case o.Op == "record" && o.Record != nil && o.Record.ID != "" && o.Record.CollectionID != "":
	case o.Op == "otp" && o.OTP != nil && o.OTP.ID != "" && o.OTP.RecordID != "" && o.OTP.CollectionID != "" && o.OTP.Hash != "":
	case o.Op == "mfa" && o.MFA != nil && o.MFA.ID != "" && o.MFA.RecordID != "" && o.MFA.CollectionID != "" && o.MFA.Method != "":
	case o.Op == "externalAuth" && o.ExternalAuth != nil && o.ExternalAuth.ID != "" && o.ExternalAuth.RecordID != "" &&
		o.ExternalAuth.CollectionID != "" && o.ExternalAuth.Provider != "" && o.ExternalAuth.ProviderID != "":
	case o.Op == "authOrigin" && o.AuthOrigin != nil && o.AuthOrigin.ID != "" && o.AuthOrigin.RecordID != "" &&
		o.AuthOrigin.CollectionID != "" && o.AuthOrigin.Fingerprint != "":
	case o.Op == "totp" && o.TOTP != nil && o.TOTP.RecordID != "" && o.TOTP.CollectionID != "" && o.TOTP.Secret != "":
	case o.Op == "passkey" && o.Passkey.valid():
	case (o.Op == "deleteCollection" || o.Op == "deleteRecord" || o.Op == "deleteOTP" || o.Op == "deleteMFA" ||
		o.Op == "deleteExternalAuth" || o.Op == "deleteAuthOrigin" || o.Op == "deleteTOTP" || o.Op == "deletePasskey") && o.ID != "":
	default:
		return fmt.Errorf("malformed change %q", o.Op)
	}
	if o.Op == "collection" && o.Collection.Type == TypeAuth && o.Collection.AuthOptions == nil {
		return fmt.Errorf("auth collection %s without options", o.Collection.ID)
	}
	return nil
}

// Open opens the store journal at path, creating it with the _superusers and
// users collections if it does not exist.
func Open(path string, opts Options) (*Store, error) {
	if opts.Hasher == nil {
		return nil, errors.New("authn: Options.Hasher is required")
	}
	s := &Store{
		now:       opts.Now,
		rnd:       NewRandom(opts.Rand),
		hasher:    opts.Hasher,
		log:       opts.Logger,
		sizes:     map[string]int64{},
		compactAt: defaultCompactAt,
		cols:      map[string]*Collection{},
		recs:      map[string]*Record{},
		byCol:     map[string]map[string]*Record{},
		byEmail:   map[string]map[string]*Record{},
		hashCosts: map[string]*hashCosts{},
		tokenKeys: map[string]map[string]int{},
		otps:      map[string]*otpEntry{},
		recOTPs:   map[string]map[string]*otpEntry{},
		mfas:      map[string]*mfaEntry{},
		decoys:    map[string][]decoyOTP{},

		links:          map[string]*ExternalAuth{},
		linkByIdentity: map[string]*ExternalAuth{},
		recLinks:       map[string]map[string]*ExternalAuth{},
		origins:        map[string]*AuthOrigin{},
		recOrigins:     map[string]map[string]*AuthOrigin{},
		totps:          map[string]*totpEntry{},
		totpFails:      map[string]*failWindow{},
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	j, err := journal.Open(path, journal.Options{
		Strict: true,
		FS:     opts.FS,
		Logger: s.log,
		OnDamage: func(d journal.Damage) {
			s.log.Warn("auth journal: dropped torn tail", "path", path, "offset", d.Offset, "bytes", d.Length)
		},
	}, func(off int64, payload []byte) error {
		var ops []*op
		if err := json.Unmarshal(payload, &ops); err != nil {
			return fmt.Errorf("decode %s entry at offset %d: %w", path, off, err)
		}
		for _, o := range ops {
			if err := o.check(); err != nil {
				return fmt.Errorf("%s entry at offset %d: %w", path, off, err)
			}
		}
		s.applyFrame(ops, journal.FrameSize(len(payload)))
		return nil
	})
	if err != nil {
		var ce *journal.CorruptError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("authn: %w; restore the data dir from a backup, or move %s aside to start empty", err, path)
		}
		return nil, fmt.Errorf("authn: %w", err)
	}
	s.j = j
	if err := s.bootstrap(); err != nil {
		j.Close()
		return nil, err
	}
	if _, err := s.Sweep(); err != nil {
		s.log.Warn("auth journal: could not delete expired OTPs and MFA sessions", "err", err)
	}
	if opts.SweepEvery >= 0 {
		s.startSweeper(cmp.Or(opts.SweepEvery, time.Hour))
	}
	return s, nil
}

// startSweeper runs Sweep every d until Close.
func (s *Store) startSweeper(d time.Duration) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if _, err := s.Sweep(); err != nil {
					s.log.Warn("auth journal: could not delete expired OTPs and MFA sessions", "err", err)
				}
			}
		}
	}()
	s.stopSweep = sync.OnceFunc(func() { close(done); <-stopped })
}

// bootstrap creates the built-in collections in a new store.
func (s *Store) bootstrap() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now().UTC()
	var ops []*op
	if su, ok := s.cols[SuperusersID]; !ok {
		c, err := newSuperusersCollection(s.rnd, now)
		if err != nil {
			return err
		}
		ops = append(ops, &op{Op: "collection", Collection: c})
	} else if fixed, what := repairSuperusers(su); len(what) > 0 {
		s.log.Warn("auth journal: _superusers broke its invariants (written by an older version); restored",
			"options", strings.Join(what, ", "))
		ops = append(ops, &op{Op: "collection", Collection: fixed})
		if opened := slices.ContainsFunc(what, func(o string) bool { return strings.HasSuffix(o, "Rule") }); opened {
			// Whoever the old rules let in may have made themselves a
			// superuser: name the accounts for the operator to review.
			var emails []string
			for _, r := range s.sortedRecords(SuperusersID) {
				emails = append(emails, r.Email)
			}
			s.log.Warn("auth journal: _superusers had rules that let others create, read or change superusers; review every superuser and delete any you did not create",
				"superusers", len(emails), "emails", strings.Join(emails[:min(len(emails), 50)], ", "))
		}
	}
	for _, id := range s.colOrder {
		c := s.cols[id]
		if c.IsSuperusers() || !c.IsAuth() {
			continue
		}
		if fixed, what := repairDurations(c.clone()); len(what) > 0 {
			s.log.Warn("auth journal: token durations out of range (written by an older version); set to the defaults",
				"collection", c.Name, "options", strings.Join(what, ", "))
			ops = append(ops, &op{Op: "collection", Collection: fixed})
		}
	}
	if len(s.cols) == 0 {
		c, err := newUsersCollection(s.rnd, now)
		if err != nil {
			return err
		}
		ops = append(ops, &op{Op: "collection", Collection: c})
	}
	if len(ops) == 0 {
		return nil
	}
	return s.commit(ops...)
}

// repairSuperusers returns a copy of su with the invariants that older
// versions let an update break put back (the rules, name, OAuth2 off,
// password sign-in on, OTP only with MFA, every token duration in range), and
// the names of the options it changed. Since the rules of a system
// collection cannot be changed through the API any more, a data dir whose
// _superusers was opened to guests could not be closed otherwise.
func repairSuperusers(su *Collection) (*Collection, []string) {
	c := su.clone()
	var what []string
	fix := func(name string, broken bool, put func()) {
		if broken {
			put()
			what = append(what, name)
		}
	}
	for name, r := range map[string]**string{"listRule": &c.ListRule, "viewRule": &c.ViewRule, "createRule": &c.CreateRule,
		"updateRule": &c.UpdateRule, "deleteRule": &c.DeleteRule, "manageRule": &c.ManageRule} {
		fix(name, *r != nil, func() { *r = nil })
	}
	fix("authRule", c.AuthRule == nil || *c.AuthRule != "", func() { c.AuthRule = strp("") })
	fix("name", c.Name != SuperusersName, func() { c.Name = SuperusersName; c.Indexes = authIndexes(c.ID, c.Name) })
	fix("oauth2", c.OAuth2.Enabled || len(c.OAuth2.Providers) > 0, func() { c.OAuth2.Enabled, c.OAuth2.Providers = false, []Provider{} })
	fix("passwordAuth", !c.PasswordAuth.Enabled, func() { c.PasswordAuth.Enabled = true })
	fix("mfa", c.OTP.Enabled && !c.MFA.Enabled, func() { c.MFA.Enabled = true })
	_, durations := repairDurations(c)
	what = append(what, durations...)
	slices.Sort(what)
	return c, what
}

// repairDurations puts every token duration of c that is out of range (and
// not the static users authToken of §5.9) back to its default, in place,
// and returns it with the names of the options it changed. Older versions accepted
// any duration, 0 included, where tokens now always expire.
func repairDurations(c *Collection) (*Collection, []string) {
	var what []string
	for _, typ := range TokenTypes {
		t := c.Token(typ)
		if checkRange(t.Duration, MinTokenDuration, MaxTokenDuration) != nil && !staticAllowed(c, typ, t.Duration) {
			t.Duration = defaultTokenDuration(c, typ)
			what = append(what, string(typ)+"Token")
		}
	}
	return c, what
}

// defaultTokenDuration is PocketBase's default duration of c's tokens of
// type typ, in seconds.
func defaultTokenDuration(c *Collection, typ TokenType) int64 {
	switch typ {
	case TokenAuth:
		return int64(defaultAuthDuration(c))
	case TokenVerification:
		return 259200
	case TokenFile:
		return 180
	}
	return 1800 // password reset, email change
}

// Capture pauses the store's writers and returns its journal's durable
// prefix as a section, for a backup that captures every store at one
// instant. The writers stay paused (readers do not) until release is
// called; the caller releases them as soon as every store is captured, and
// copies the sections afterwards. On error nothing stays paused. The caller
// closes the section.
func (s *Store) Capture() (_ []*journal.Section, release func(), err error) {
	s.mu.RLock() // writers hold s.mu across their append and fsync
	sec, err := s.j.Capture()
	if err != nil {
		s.mu.RUnlock()
		return nil, nil, fmt.Errorf("authn: capture: %w", err)
	}
	return []*journal.Section{sec}, sync.OnceFunc(s.mu.RUnlock), nil
}

// Health returns nil while the store can save changes, or the error of the
// last failed write, which wraps journal.ErrStorageFull or
// journal.ErrStorageFailed. A failed write changes nothing: the next one is
// tried afresh and, once it succeeds, the store is healthy again. So that
// the store reports recovery even when nobody writes, a degraded store
// probes the disk when asked, at most once per probeInterval.
func (s *Store) Health() error {
	err := s.j.Fault()
	if err == nil {
		return nil
	}
	s.probeMu.Lock()
	defer s.probeMu.Unlock()
	if now := s.now(); now.Sub(s.lastProbe) >= probeInterval || now.Before(s.lastProbe) {
		s.lastProbe = now
		err = s.j.Probe()
	}
	return err
}

// Close waits for the OTPs being saved and mailed, then closes the
// journal.
func (s *Store) Close() error {
	if s.stopSweep != nil {
		s.stopSweep()
	}
	s.pending.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.j.Close()
}

func opKey(o *op) string {
	switch o.Op {
	case "collection":
		return "c:" + o.Collection.ID
	case "deleteCollection":
		return "c:" + o.ID
	case "record":
		return "r:" + o.Record.ID
	case "otp":
		return "o:" + o.OTP.ID
	case "deleteOTP":
		return "o:" + o.ID
	case "mfa":
		return "m:" + o.MFA.ID
	case "deleteMFA":
		return "m:" + o.ID
	case "externalAuth":
		return "e:" + o.ExternalAuth.ID
	case "deleteExternalAuth":
		return "e:" + o.ID
	case "authOrigin":
		return "a:" + o.AuthOrigin.ID
	case "deleteAuthOrigin":
		return "a:" + o.ID
	case "totp":
		return "t:" + o.TOTP.RecordID
	case "deleteTOTP":
		return "t:" + o.ID
	case "passkey":
		return "p:" + o.Passkey.ID
	case "deletePasskey":
		return "p:" + o.ID
	}
	return "r:" + o.ID
}

// applyFrame applies the ops of one frame, charging each an equal share of
// the frame's size for the compaction estimate.
func (s *Store) applyFrame(ops []*op, size int64) {
	for _, o := range ops {
		s.apply(o, size/int64(len(ops)))
	}
}

// apply changes the in-memory state; size is the op's share of its frame.
func (s *Store) apply(o *op, size int64) {
	key := opKey(o)
	s.live -= s.sizes[key]
	delete(s.sizes, key)
	switch o.Op {
	case "collection":
		c := o.Collection
		if c.ID == SuperusersID {
			markSuperusersDates(c)
		}
		if _, ok := s.cols[c.ID]; !ok {
			s.colOrder = append(s.colOrder, c.ID)
			s.byCol[c.ID] = map[string]*Record{}
			s.byEmail[c.ID] = map[string]*Record{}
		}
		s.cols[c.ID] = c
		s.apiRules.setNames(s.authFieldNames(""))
		s.apiRules.get(c)
	case "deleteCollection":
		s.dropCollection(o.ID)
		return
	case "record":
		r := o.Record
		old := s.recs[r.ID]
		if old != nil {
			delete(s.byEmail[old.CollectionID], old.Email)
			if old.PasswordHash != r.PasswordHash {
				// A new password ends the record's MFA sessions
				// and forgets its sign-in origins, as in PocketBase.
				s.dropMFAs(func(m *mfaEntry) bool { return m.RecordID == r.ID })
				s.dropRecordOrigins(r.ID)
			}
		}
		s.recount(old, r)
		s.recs[r.ID] = r
		s.unsort(r.CollectionID)
		if m := s.byCol[r.CollectionID]; m != nil {
			m[r.ID] = r
		}
		if r.Email != "" && s.byEmail[r.CollectionID] != nil {
			s.byEmail[r.CollectionID][r.Email] = r
		}
	case "deleteRecord":
		if old, ok := s.recs[o.ID]; ok {
			delete(s.byEmail[old.CollectionID], old.Email)
			s.recount(old, nil)
			delete(s.byCol[old.CollectionID], o.ID)
			delete(s.recs, o.ID)
			s.unsort(old.CollectionID)
		}
		s.dropRecordAuthState(o.ID)
		return
	case "otp":
		o.OTP.durable = true
		s.addOTP(o.OTP)
	case "deleteOTP":
		s.dropOTP(o.ID)
		return
	case "mfa":
		s.mfas[o.MFA.ID] = o.MFA
	case "deleteMFA":
		delete(s.mfas, o.ID)
		return
	case "externalAuth":
		s.addLink(o.ExternalAuth)
	case "deleteExternalAuth":
		s.dropLink(o.ID)
		return
	case "authOrigin":
		s.addOrigin(o.AuthOrigin)
	case "deleteAuthOrigin":
		s.dropOrigin(o.ID)
		return
	case "totp":
		s.totps[o.TOTP.RecordID] = o.TOTP
	case "deleteTOTP":
		delete(s.totps, o.ID)
		delete(s.totpFails, o.ID)
		return
	case "passkey":
		s.addPasskey(o.Passkey)
	case "deletePasskey":
		s.dropPasskey(o.ID)
		return
	}
	s.sizes[key] = size
	s.live += size
}

// dropCollection forgets the collection id and everything of its
// records (apply's deleteCollection).
func (s *Store) dropCollection(id string) {
	s.apiRules.drop(id)
	for rid := range s.byCol[id] {
		delete(s.recs, rid)
		s.live -= s.sizes["r:"+rid]
		delete(s.sizes, "r:"+rid)
		s.dropRecordAuthState(rid)
	}
	delete(s.cols, id)
	s.apiRules.setNames(s.authFieldNames(""))
	delete(s.byCol, id)
	s.unsort(id)
	delete(s.byEmail, id)
	delete(s.hashCosts, id)
	delete(s.tokenKeys, id)
	s.colOrder = slices.DeleteFunc(s.colOrder, func(c string) bool { return c == id })
}

// recount moves a record from old (nil for a new one) to r (nil when it
// is deleted) in the counts by hash cost and by token key (hashCosts,
// tokenKeys). The caller holds s.mu for writing.
func (s *Store) recount(old, r *Record) {
	if old != nil && r != nil && old.CollectionID == r.CollectionID && old.PasswordHash == r.PasswordHash && old.TokenKey == r.TokenKey {
		return
	}
	if old != nil {
		s.countHash(old, -1)
		s.countTokenKey(old, -1)
	}
	if r != nil {
		s.countHash(r, 1)
		s.countTokenKey(r, 1)
	}
}

// commit persists ops durably, as one frame, then applies them. The caller
// holds s.mu.
func (s *Store) commit(ops ...*op) error {
	for _, o := range ops {
		o.V = opVersion
	}
	payload, err := json.Marshal(ops)
	if err != nil {
		return fmt.Errorf("authn: encode: %w", err)
	}
	if _, err := s.j.Append(payload); err != nil {
		return err
	}
	if err := s.j.Sync(); err != nil {
		return err
	}
	s.applyFrame(ops, journal.FrameSize(len(payload)))
	if size := s.j.Size(); size > s.compactAt && size > 4*s.live && !s.now().Before(s.noCompact) {
		if err := s.compact(); err != nil {
			// The journal is still whole and correct, just longer than
			// needed. A compaction that failed (most often for lack of
			// space) is not tried again at every write: each try would
			// write the whole live state again, and log again.
			s.noCompact = s.now().Add(compactBackoff)
			s.log.Warn("auth journal: compaction failed; the journal stays as it is", "err", err, "retry after", compactBackoff)
		}
	}
	return nil
}

// compactBackoff is how long a failed compaction waits before the next try.
const compactBackoff = 10 * time.Second

// compact rewrites the journal with the live state only. The caller holds s.mu.
func (s *Store) compact() error {
	sizes := map[string]int64{}
	var live int64
	err := s.j.Compact(func(w *journal.Writer) error {
		add := func(o *op) error {
			o.V = opVersion
			b, err := json.Marshal([]*op{o})
			if err != nil {
				return err
			}
			if _, err := w.Append(b); err != nil {
				return err
			}
			sz := journal.FrameSize(len(b))
			sizes[opKey(o)] = sz
			live += sz
			return nil
		}
		for _, id := range s.colOrder {
			if err := add(&op{Op: "collection", Collection: s.cols[id]}); err != nil {
				return err
			}
		}
		for _, id := range s.colOrder {
			for _, r := range s.sortedRecords(id) {
				if err := add(&op{Op: "record", Record: r}); err != nil {
					return err
				}
			}
		}
		// The OTPs and MFA sessions still usable; expired ones are left
		// out (and forgotten below), as are OTPs still being saved, which
		// their own frame writes.
		now := s.now()
		for _, o := range sortedByID(s.otps) {
			if c, ok := s.cols[o.CollectionID]; ok && c.IsAuth() && o.durable && !o.expired(c, now) {
				if err := add(&op{Op: "otp", OTP: o}); err != nil {
					return err
				}
			}
		}
		for _, l := range sortedByID(s.links) {
			if err := add(&op{Op: "externalAuth", ExternalAuth: l}); err != nil {
				return err
			}
		}
		for _, o := range sortedByID(s.origins) {
			if err := add(&op{Op: "authOrigin", AuthOrigin: o}); err != nil {
				return err
			}
		}
		for _, t := range sortedByID(s.totps) {
			if err := add(&op{Op: "totp", TOTP: t}); err != nil {
				return err
			}
		}
		for _, p := range s.allPasskeys() {
			if err := add(&op{Op: "passkey", Passkey: p}); err != nil {
				return err
			}
		}
		for _, m := range sortedByID(s.mfas) {
			if c, ok := s.cols[m.CollectionID]; ok && c.IsAuth() && !m.expired(c, now) {
				if err := add(&op{Op: "mfa", MFA: m}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.sizes, s.live = sizes, live
	for id, o := range s.otps {
		if _, kept := sizes["o:"+id]; !kept && o.durable {
			s.dropOTP(id)
		}
	}
	for id := range s.mfas {
		if _, kept := sizes["m:"+id]; !kept {
			delete(s.mfas, id)
		}
	}
	return nil
}

// sortedByID returns the values of m in the order of their keys, so that
// a compaction writes the same bytes for the same state.
func sortedByID[V any](m map[string]V) []V {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]V, len(keys))
	for i, k := range keys {
		out[i] = m[k]
	}
	return out
}

// Collection returns the collection with the given id or (case-insensitive)
// name. The result must not be modified.
func (s *Store) Collection(idOrName string) (*Collection, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.collection(idOrName)
}

func (s *Store) collection(idOrName string) (*Collection, bool) {
	if c, ok := s.cols[idOrName]; ok {
		return c, true
	}
	for _, id := range s.colOrder {
		if c := s.cols[id]; strings.EqualFold(c.Name, idOrName) {
			return c, true
		}
	}
	return nil, false
}

// Collections returns every collection in creation order. The results must
// not be modified.
func (s *Store) Collections() []*Collection {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*Collection, len(s.colOrder))
	for i, id := range s.colOrder {
		out[i] = s.cols[id]
	}
	return out
}

// Record returns the record id of collection c.
func (s *Store) Record(c *Collection, id string) (*Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byCol[c.ID][id]
	return r, ok
}

// Records returns the records of collection c, oldest first.
func (s *Store) Records(c *Collection) []*Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.sortedRecords(c.ID)
}

// sortedRecords returns the records of collection colID by creation time
// then id, in a new slice. The order is computed once per change of the
// collection's records. The caller holds s.mu (a read lock suffices).
func (s *Store) sortedRecords(colID string) []*Record {
	s.sortMu.Lock()
	defer s.sortMu.Unlock()
	out, ok := s.sorted[colID]
	if !ok {
		out = s.sortRecords(colID)
		if s.sorted == nil {
			s.sorted = map[string][]*Record{}
		}
		s.sorted[colID] = out
	}
	return slices.Clone(out)
}

// unsort forgets the cached order of collection colID's records. The
// caller holds s.mu.
func (s *Store) unsort(colID string) {
	s.sortMu.Lock()
	delete(s.sorted, colID)
	s.sortMu.Unlock()
}

func (s *Store) sortRecords(colID string) []*Record {
	m := s.byCol[colID]
	out := make([]*Record, 0, len(m))
	for _, r := range m {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *Record) int {
		return cmp.Or(a.Created.Compare(b.Created), strings.Compare(a.ID, b.ID))
	})
	return out
}

// FindByEmail returns the record of c with exactly this email.
func (s *Store) FindByEmail(c *Collection, email string) (*Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.byEmail[c.ID][email]
	return r, ok
}

// findByField returns the record of c whose field has value v. The caller
// holds s.mu.
func (s *Store) findByField(c *Collection, field, v string) (*Record, bool) {
	if field == "email" {
		r, ok := s.byEmail[c.ID][v]
		return r, ok
	}
	if field == "id" {
		r, ok := s.byCol[c.ID][v]
		return r, ok
	}
	for _, r := range s.byCol[c.ID] {
		if x, ok := r.Fields[field].(string); ok && x == v {
			return r, true
		}
	}
	return nil, false
}
