package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"strongbox/authn/validation"
	"strongbox/backup/cron"
	"strongbox/logstore/journal"
)

// Settings is the settings document. Secrets (smtp.password, the S3 secrets)
// are stored but never reported: see Public.
type Settings struct {
	SMTP         SMTP         `json:"smtp"`
	Backups      Backups      `json:"backups"`
	S3           S3           `json:"s3"`
	Meta         Meta         `json:"meta"`
	RateLimits   RateLimits   `json:"rateLimits"`
	TrustedProxy TrustedProxy `json:"trustedProxy"`
	Batch        Batch        `json:"batch"`
	Logs         Logs         `json:"logs"`
}

// SMTP configures outgoing mail.
type SMTP struct {
	Enabled    bool   `json:"enabled"`
	Port       int    `json:"port"`
	Host       string `json:"host"`
	Username   string `json:"username"`
	Password   string `json:"password,omitempty"`
	AuthMethod string `json:"authMethod"`
	TLS        bool   `json:"tls"`
	LocalName  string `json:"localName"`
}

// Backups configures automatic backups and their storage.
type Backups struct {
	Cron        string `json:"cron"`
	CronMaxKeep int    `json:"cronMaxKeep"`
	S3          S3     `json:"s3"`
}

// S3 configures an S3-compatible bucket.
type S3 struct {
	Enabled        bool   `json:"enabled"`
	Bucket         string `json:"bucket"`
	Region         string `json:"region"`
	Endpoint       string `json:"endpoint"`
	AccessKey      string `json:"accessKey"`
	Secret         string `json:"secret,omitempty"`
	ForcePathStyle bool   `json:"forcePathStyle"`
}

// Meta describes the application.
type Meta struct {
	AppName       string `json:"appName"`
	AppURL        string `json:"appURL"`
	SenderName    string `json:"senderName"`
	SenderAddress string `json:"senderAddress"`
	HideControls  bool   `json:"hideControls"`
}

// TrustedProxy names the headers that carry the client's address when the
// server sits behind a proxy. Empty: the connection's address is the client's.
type TrustedProxy struct {
	Headers       []string `json:"headers"`
	UseLeftmostIP bool     `json:"useLeftmostIP"`
}

// Batch is PocketBase's configuration of its batch endpoint (POST
// /api/batch). Strongbox has no such endpoint: the section is kept, with
// the reference's defaults and validation, so that clients reading or
// writing settings see the shape they know, and enabling it is refused.
type Batch struct {
	Enabled     bool  `json:"enabled"`
	MaxRequests int   `json:"maxRequests"`
	Timeout     int64 `json:"timeout"`
	MaxBodySize int64 `json:"maxBodySize"`
}

// Logs configures request logging. MaxDays 0 turns logging off and drops the
// stored logs.
type Logs struct {
	MaxDays   int  `json:"maxDays"`
	MinLevel  int  `json:"minLevel"`
	LogIP     bool `json:"logIP"`
	LogAuthID bool `json:"logAuthId"`
}

// Defaults returns the settings of a new data dir (the reference's defaults).
func Defaults() Settings {
	return Settings{
		SMTP:         SMTP{Port: 587, Host: "smtp.example.com"},
		Backups:      Backups{CronMaxKeep: 3},
		Meta:         Meta{AppName: "Acme", AppURL: "http://localhost:8090", SenderName: "Support", SenderAddress: "support@example.com"},
		RateLimits:   DefaultRateLimits(),
		TrustedProxy: TrustedProxy{Headers: []string{}},
		Batch:        Batch{MaxRequests: 50, Timeout: 3},
		Logs:         Logs{MaxDays: 5, LogIP: true},
	}
}

// Public returns s without secrets.
func (s Settings) Public() Settings {
	s.SMTP.Password = ""
	s.Backups.S3.Secret = ""
	s.S3.Secret = ""
	s.TrustedProxy.Headers = append([]string{}, s.TrustedProxy.Headers...)
	s.RateLimits.Rules = append([]RateLimitRule{}, s.RateLimits.Rules...)
	return s
}

// Options configure Open.
type Options struct {
	// Logger receives the journal's warnings, such as an fsync slower than
	// the durability window (journal.DefaultSyncWindow); nil discards them.
	Logger *slog.Logger
	// FS is the journal's file system; nil means journal.OS (tests inject
	// faults with journaltest).
	FS journal.FS
	// Now is the clock of Health's probes; nil means time.Now.
	Now func() time.Time
}

// Store holds the current settings. It is safe for concurrent use; Get is
// lock-free, since the request logger reads the settings on every request.
type Store struct {
	mu   sync.Mutex // serialises Update and the calls to subscribers
	cur  atomic.Pointer[Settings]
	j    *journal.File
	now  func() time.Time
	log  *slog.Logger
	subs []*subscriber // guarded by mu

	lastProbe atomic.Int64 // Unix ns of Health's last probe
}

// Open opens the settings journal at path (created with the defaults if
// missing).
func Open(path string, opts Options) (*Store, error) {
	s := &Store{now: opts.Now, log: opts.Logger}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	cur, found := Defaults(), false
	jopts := journal.Options{Strict: true, FS: opts.FS, Logger: opts.Logger}
	j, err := journal.Open(path, jopts, func(off int64, p []byte) error {
		rec := record{Settings: Defaults()}
		if err := json.Unmarshal(p, &rec); err != nil {
			return fmt.Errorf("decode %s at offset %d: %w", path, off, err)
		}
		if rec.V > recordVersion || rec.V < 0 {
			return fmt.Errorf("%s at offset %d: format version %d, but this strongbox reads versions up to %d: run a newer strongbox on this data dir", path, off, rec.V, recordVersion)
		}
		cur, found = rec.Settings, true
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	s.j = j
	s.cur.Store(&cur)
	if !found {
		if err := s.save(cur); err != nil {
			j.Close()
			return nil, err
		}
	}
	return s, nil
}

// Close closes the journal and drops the subscribers.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = nil
	return s.j.Close()
}

// probeInterval is how often, at most, Health probes the disk of a degraded
// store.
const probeInterval = time.Second

// Health returns nil while the settings can be saved, or the error of the
// last failed save (wrapping journal.ErrStorageFull or ErrStorageFailed);
// the next save is tried afresh. A degraded store probes the disk, at most
// once per probeInterval, so that it reports recovery without a save.
func (s *Store) Health() error {
	err := s.j.Fault()
	if err == nil {
		return nil
	}
	now := s.now().UnixNano()
	if last := s.lastProbe.Load(); now-last >= int64(probeInterval) && s.lastProbe.CompareAndSwap(last, now) {
		err = s.j.Probe()
	}
	return err
}

// Capture pauses Update and returns the settings journal's durable prefix
// as a section, for a backup that captures every store at one instant.
// Update waits until release is called (Get does not); the caller releases
// as soon as every store is captured, and copies the section afterwards.
// On error nothing stays paused. The caller closes the section.
func (s *Store) Capture() (_ []*journal.Section, release func(), err error) {
	s.mu.Lock()
	sec, err := s.j.Capture()
	if err != nil {
		s.mu.Unlock()
		return nil, nil, fmt.Errorf("settings: capture: %w", err)
	}
	return []*journal.Section{sec}, sync.OnceFunc(s.mu.Unlock), nil
}

// Get returns the current settings, secrets included. The slices in it are
// shared and must not be modified.
func (s *Store) Get() Settings { return *s.cur.Load() }

// Update changes the settings: it calls edit with a copy of the current
// settings, keeps the stored secret of any secret edit left empty (the
// public view never shows them, so a client sends them back empty),
// validates the result and stores it durably. It returns the settings now
// current, or edit's error as it is, or a validation.Errors, or the save's
// error (wrapping journal.ErrStorageFull or journal.ErrStorageFailed); on
// an error nothing has changed. Updates are serialised: edit sees the
// result of every update committed before it.
//
// Before Update returns, every subscriber has been called with the new
// settings (see Subscribe): a change is in effect once it is acknowledged.
func (s *Store) Update(edit func(*Settings) error) (Settings, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.Get()
	next := cur
	next.TrustedProxy.Headers = append([]string{}, cur.TrustedProxy.Headers...)
	// A copy with the same elements, so that an edit may change a rule in
	// place (the API's PATCH decodes a rule into the element at its index,
	// as the reference's PATCH, which binds into a clone, does).
	next.RateLimits.Rules = append([]RateLimitRule{}, cur.RateLimits.Rules...)
	if err := edit(&next); err != nil {
		return Settings{}, err
	}
	if next.SMTP.Password == "" {
		next.SMTP.Password = cur.SMTP.Password
	}
	if next.Backups.S3.Secret == "" {
		next.Backups.S3.Secret = cur.Backups.S3.Secret
	}
	if next.S3.Secret == "" {
		next.S3.Secret = cur.S3.Secret
	}
	if next.TrustedProxy.Headers == nil {
		next.TrustedProxy.Headers = []string{}
	}
	if next.RateLimits.Rules == nil {
		next.RateLimits.Rules = []RateLimitRule{}
	}
	if errs := next.validate(); len(errs) > 0 {
		return Settings{}, errs
	}
	if err := s.save(next); err != nil {
		return Settings{}, err
	}
	for _, sub := range s.subs {
		sub.fn(next)
	}
	return next, nil
}

// Subscribe calls fn with the current settings, at once, and then with the
// new settings after every committed change, until cancel is called or the
// store is closed. This is how a subsystem applies its part of the
// settings, at start and on every change, without anyone doing it for it.
//
// The calls are made in commit order, never concurrently (for one
// subscriber or across subscribers), each with the settings that change
// committed; fn misses none and sees none twice. They are made within the
// commit, by Update, under the lock that serialises changes, before Update
// returns: a change is in effect in every subsystem by the time it is
// acknowledged. So fn must be quick: a slow subscriber delays the
// acknowledgement of the change and the next changes (never Get). It must
// not panic, and must not call Update, Subscribe or a cancel function of
// this store, which would deadlock. What fails in applying a change is
// fn's to report (a log, its own health); the change stays committed.
// The slices in the settings are shared and must not be modified.
//
// Once cancel returns, fn is not called again. Calling cancel more than
// once is harmless.
func (s *Store) Subscribe(fn func(Settings)) (cancel func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub := &subscriber{fn: fn}
	fn(s.Get())
	s.subs = append(s.subs, sub)
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.subs = slices.DeleteFunc(s.subs, func(x *subscriber) bool { return x == sub })
	}
}

// subscriber is one Subscribe call: a pointer, so that the same fn
// subscribed twice is two subscribers.
type subscriber struct{ fn func(Settings) }

// record is one frame of the settings journal: the whole document with its
// format version V (recordVersion when written; see "Payloads" in the
// journal package's doc). A frame without it was written before the field
// existed, in version 1.
type record struct {
	V int `json:"v"`
	Settings
}

// recordVersion is the format version of the frames this strongbox writes,
// and the newest it reads.
const recordVersion = 1

// save appends v and makes it current. The caller holds s.mu (or is Open).
// The change is durable, and current, before the journal is compacted:
// compaction only reclaims space, so a compaction that fails (even one
// whose new file is in place but whose folder could not be synced) leaves
// the change applied, never answered with an error and kept on disk.
func (s *Store) save(v Settings) error {
	b, err := json.Marshal(record{V: recordVersion, Settings: v})
	if err != nil {
		return err
	}
	if _, err = s.j.Append(b); err == nil {
		err = s.j.Sync()
	}
	if err != nil {
		return fmt.Errorf("settings: save: %w", err)
	}
	s.cur.Store(&v)
	if s.j.Size() > 256<<10 {
		err := s.j.Compact(func(w *journal.Writer) error {
			_, err := w.Append(b)
			return err
		})
		if err != nil {
			s.log.Warn("settings journal: compaction failed; the journal stays as it is", "err", err)
		}
	}
	return nil
}

var (
	errRequired = validation.Required()
	errEmail    = validation.IsEmail()
	errURL      = validation.IsURL()
	errHost     = validation.IsHost()
)

func errMin(n int) *validation.Error { return validation.MinGreaterEqual(int64(n)) }

// validate checks the document and returns its failures, nested by section.
func (v Settings) validate() validation.Errors {
	errs := validation.Errors{}
	add := func(section, field string, e *validation.Error) {
		errs.Sub(section)[field] = e
	}
	switch {
	case v.Meta.AppName == "":
		add("meta", "appName", errRequired)
	case len(v.Meta.AppName) > 255:
		add("meta", "appName", validation.LengthTooLong(255))
	}
	switch {
	case v.Meta.AppURL == "":
		add("meta", "appURL", errRequired)
	case !validURL(v.Meta.AppURL):
		add("meta", "appURL", errURL)
	}
	if v.Meta.SenderName == "" {
		add("meta", "senderName", errRequired)
	}
	switch {
	case v.Meta.SenderAddress == "":
		add("meta", "senderAddress", errRequired)
	case !validEmail(v.Meta.SenderAddress):
		add("meta", "senderAddress", errEmail)
	}
	if v.Logs.MaxDays < 0 {
		add("logs", "maxDays", errMin(0))
	}
	// PocketBase (BatchConfig.Validate): maxRequests and timeout required
	// when enabled, Min(0); maxBodySize Min(0).
	switch {
	case v.Batch.MaxRequests < 0:
		add("batch", "maxRequests", errMin(0))
	case v.Batch.MaxRequests == 0 && v.Batch.Enabled:
		add("batch", "maxRequests", errRequired)
	}
	switch {
	case v.Batch.Timeout < 0:
		add("batch", "timeout", errMin(0))
	case v.Batch.Timeout == 0 && v.Batch.Enabled:
		add("batch", "timeout", errRequired)
	}
	if v.Batch.MaxBodySize < 0 {
		add("batch", "maxBodySize", errMin(0))
	}
	if _, invalid := errs["batch"]; v.Batch.Enabled && !invalid {
		// As with S3: accepting it would promise an endpoint that is not
		// there.
		add("batch", "enabled", validation.New(validation.CodeUnsupported,
			"Batch requests are not supported: this server has no /api/batch endpoint."))
	}
	// PocketBase (SMTPConfig.Validate): host is.Host, required when
	// enabled; port required when enabled, Min(0); authMethod in LOGIN,
	// PLAIN or empty; localName is.Host.
	switch {
	case v.SMTP.Host == "" && v.SMTP.Enabled:
		add("smtp", "host", errRequired)
	case v.SMTP.Host != "" && !validHost(v.SMTP.Host):
		add("smtp", "host", errHost)
	}
	switch {
	case v.SMTP.Port < 0:
		add("smtp", "port", errMin(0))
	case v.SMTP.Port == 0 && v.SMTP.Enabled:
		add("smtp", "port", errRequired)
	}
	if a := v.SMTP.AuthMethod; a != "" && a != "PLAIN" && a != "LOGIN" {
		add("smtp", "authMethod", validation.InInvalid(nil))
	}
	if v.SMTP.LocalName != "" && !validHost(v.SMTP.LocalName) {
		add("smtp", "localName", errHost)
	}
	if v.Backups.Cron != "" {
		if _, err := cron.Parse(v.Backups.Cron); err != nil {
			// PocketBase answers with its parser's own text for the fault.
			msg := cron.InvalidMessage
			if se, ok := errors.AsType[*cron.SyntaxError](err); ok {
				msg = se.Message()
			}
			add("backups", "cron", validation.New(validation.CodeInvalidCron, msg))
		}
	}
	// PocketBase: When(cron != "", Required), Min(1). Min skips the empty
	// value, so 0 is refused only when cron is set ("Cannot be blank."),
	// and a negative value always, by Min.
	switch {
	case v.Backups.CronMaxKeep < 0:
		add("backups", "cronMaxKeep", errMin(1))
	case v.Backups.CronMaxKeep == 0 && v.Backups.Cron != "":
		add("backups", "cronMaxKeep", errRequired)
	}
	for key, s3 := range map[string]S3{"s3": v.S3, "backups": v.Backups.S3} {
		if !s3.Enabled {
			continue
		}
		m := validation.Errors{}
		for field, val := range map[string]string{"bucket": s3.Bucket, "region": s3.Region, "endpoint": s3.Endpoint, "accessKey": s3.AccessKey, "secret": s3.Secret} {
			if val == "" {
				m[field] = errRequired
			}
		}
		if s3.Endpoint != "" && !validURL(s3.Endpoint) {
			m["endpoint"] = errURL
		}
		if len(m) == 0 {
			// Accepting S3 and going on with the local folder would
			// put backups where the operator does not look for them.
			msg := "S3 storage of backups is not supported: archives are kept in the data dir's backups folder."
			if key == "s3" {
				msg = "S3 file storage is not supported: this server stores no uploaded files."
			}
			m["enabled"] = validation.New(validation.CodeUnsupported, msg)
		}
		if key == "backups" {
			errs.Sub("backups")["s3"] = m
		} else {
			errs["s3"] = m
		}
	}
	for i, h := range v.TrustedProxy.Headers {
		if !validHeaderName(h) {
			errs.Sub("trustedProxy")["headers"] = validation.Errors{fmt.Sprint(i): validation.New(validation.CodeInvalidHeader, "Must be a valid HTTP header name.")}
		}
	}
	if e := v.RateLimits.validate(); e != nil {
		errs["rateLimits"] = validation.Errors{"rules": e}
	}
	return errs
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validHost reports whether s is an IP address or a DNS name (letters,
// digits, hyphens and dots, labels of 1 to 63 characters, at most 253 in
// all): what an SMTP host or an EHLO name may be, and never a CR or LF.
func validHost(s string) bool {
	if net.ParseIP(s) != nil {
		return true
	}
	if len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// validHeaderName reports whether h is an HTTP field name (RFC 9110 §5.1: a
// token of visible ASCII characters other than delimiters).
func validHeaderName(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}
