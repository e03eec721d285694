package app

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"strongbox/authn/lowprio"
	"strongbox/backup/stream"
	"strongbox/httpapi/api"
	"strongbox/httpapi/settings"
)

// Continuous backup. While backups.continuous and backups.s3 are enabled,
// a stream.Shipper ships the stores' committed changes to the bucket of
// backups.s3 (under stream.DefaultPrefix), from captures of the open
// stores (streamCapture). The server follows the settings
// (followStream): a change of the bucket or of the retention starts a new
// shipper, and so a new generation; closing the stores (a stop, a
// restart, a restore) stops it after one last capture.

// streamer holds the shipper running now, if any.
type streamer struct {
	mu   sync.Mutex
	cur  *stream.Shipper
	conf streamConf
}

// streamConf is what a shipper depends on in the settings.
type streamConf struct {
	bucket    settings.S3
	retention int
	// sealedTo lists the recipients the objects are encrypted to ("" for
	// none): a change starts a new shipper, whose new generation is
	// encrypted as the settings now say.
	sealedTo string
}

// followStream is the settings subscriber of the continuous backup. It
// runs while the settings store's lock is held, and a stopping shipper
// captures the stores once more: so a shipper it replaces stops in a
// goroutine of its own.
func (s *Server) followStream(v settings.Settings) {
	c := v.Backups.Continuous
	on := c.Enabled && v.Backups.S3.Enabled
	keys := archiveKeys(v.Backups.Encryption)
	var to []string
	for _, r := range keys.Recipients {
		to = append(to, fmt.Sprint(r))
	}
	conf := streamConf{bucket: v.Backups.S3, retention: c.RetentionDays, sealedTo: strings.Join(to, ",")}
	seal := keys.Sealer() // backups.encryption: age, as the archives
	s.stream.mu.Lock()
	defer s.stream.mu.Unlock()
	if s.stream.cur != nil && on && s.stream.conf == conf {
		return
	}
	if old := s.stream.cur; old != nil {
		s.stream.cur = nil
		if s.stream.conf.sealedTo != conf.sealedTo {
			// The encryption changed: nothing committed from now on
			// (this settings change, which may hold a new identity,
			// first) may reach the old generation under the old keys.
			old.Abandon()
		}
		go old.Stop()
	}
	if !on {
		return
	}
	newObj := s.cfg.ObjectStore
	if newObj == nil {
		newObj = newBucket
	}
	obj, err := newObj(v.Backups.S3)
	if err != nil {
		s.log.Error("stream: the bucket of backups.s3 cannot be used for continuous backup", "bucket", v.Backups.S3.Bucket, "err", err)
		return
	}
	s.stream.conf = conf
	s.stream.cur = stream.Start(stream.Options{
		Bucket: obj, Capture: s.streamCapture, Retention: c.Retention(), Logger: s.log, Now: s.now,
		Seal: seal,
		// Capturing, encoding, hashing and sealing run at a lower OS
		// priority, as the log export does: when requests saturate the
		// CPU they come first (stream's TestOptionsGoRunsTheWork).
		Go: lowprio.Go,
	})
}

// stopStream stops the shipper, after its last capture, and waits for it.
// The caller holds life, before it closes the stores.
func (s *Server) stopStream() {
	s.stream.mu.Lock()
	old := s.stream.cur
	s.stream.cur = nil
	s.stream.mu.Unlock()
	if old != nil {
		old.Stop()
	}
}

// StreamState is the state of the continuous backup, for GET
// /api/backups/stream.
func (s *Server) StreamState() api.StreamState {
	s.stream.mu.Lock()
	cur := s.stream.cur
	s.stream.mu.Unlock()
	if cur == nil {
		return api.StreamState{}
	}
	st := cur.Status()
	return api.StreamState{
		Enabled: true, Generation: st.Generation, LastShipped: st.LastShipped, Pending: st.Pending, Behind: st.Behind,
		RestorableFrom: st.RestorableFrom, LastError: st.LastError, LastErrorAt: st.LastErrorAt,
		Objects: st.Objects, Bytes: st.Bytes,
	}
}

// streamCapture captures the open stores for the shipper.
func (s *Server) streamCapture() (*stream.Capture, error) {
	s.capMu.RLock()
	st := s.stores
	if st == nil {
		s.capMu.RUnlock()
		return nil, errors.New("app: the stores are closed")
	}
	c, err := st.Capture(s.now)
	s.capMu.RUnlock()
	if err != nil {
		return nil, err
	}
	out := &stream.Capture{Time: c.Created, Close: c.Close}
	for i, sec := range c.sections {
		out.Files = append(out.Files, stream.FromSection(c.Source[i].Name, sec))
	}
	return out, nil
}
