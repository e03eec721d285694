package backup

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ErrInvalidArchive matches every [*ArchiveError]: errors.Is(err,
// ErrInvalidArchive) tells a refused archive from a failure to read it.
var ErrInvalidArchive = errors.New("backup: invalid archive")

// ArchiveError is why [Verify] refuses an archive. Reason says what is
// wrong in terms of the archive's own entry names, never a server path,
// so httpapi/api may show it to the client as it is.
type ArchiveError struct {
	Reason string
}

// Error returns "invalid archive: " and the reason.
func (e *ArchiveError) Error() string { return "invalid archive: " + e.Reason }

// Is makes errors.Is(err, ErrInvalidArchive) true.
func (e *ArchiveError) Is(target error) bool { return target == ErrInvalidArchive }

// Limits bound what Verify and Extract accept, against zip bombs. A zero
// field takes its value from [DefaultLimits].
type Limits struct {
	// MaxUncompressed bounds the total bytes decompressed, counted as
	// they are read (headers are not trusted).
	MaxUncompressed int64
	// MaxRatio bounds each entry's decompressed bytes over its
	// compressed bytes. Entries under ratioFloor decompressed bytes are
	// exempt: a small file of zeros legitimately compresses a thousandfold.
	MaxRatio float64
	// MaxFiles bounds the number of entries.
	MaxFiles int
	// Check, if set, is called by [Verify] (so by [Dir.Verify] and
	// [Dir.Put]) once every entry has matched the manifest: it checks
	// that the files make a data dir the server can open, which this
	// package cannot tell, since it imports no store. An error matching
	// [ErrInvalidArchive] (an [*ArchiveError], whose Reason names the
	// archive's entries, never a server path) refuses the archive; any
	// other error is a failure to check it. [Dir.Extract] does not call
	// it: a restore extracts an archive it verified first.
	Check func(Files) error
}

// Files are the files of an archive whose every entry matched its
// manifest, as [Limits.Check] reads them.
type Files struct {
	// Manifest is the archive's manifest: its list names every file.
	Manifest *Manifest
	byName   map[string]*zip.File
	sizes    map[string]int64 // as the manifest lists them
}

// Open returns the content of the listed file name, at most the size the
// manifest lists (it was checked against it), or an [*ArchiveError] if
// the manifest lists no such file.
func (f Files) Open(name string) (io.ReadCloser, error) {
	zf, ok := f.byName[name]
	if !ok {
		return nil, invalid("%q is not in %s", name, ManifestName)
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, invalid("entry %q: %v", name, err)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(rc, f.sizes[name]), rc}, nil
}

// DefaultLimits are the limits a zero [Limits] field takes.
var DefaultLimits = Limits{MaxUncompressed: 64 << 30, MaxRatio: 1000, MaxFiles: 100_000}

// ratioFloor is the decompressed size under which an entry's compression
// ratio is not checked.
const ratioFloor = 1 << 20

// maxManifest bounds manifest.json.
const maxManifest = 16 << 20

// WithDefaults returns l with each field that is not positive taken from
// [DefaultLimits]: the limits a call given l applies.
func (l Limits) WithDefaults() Limits {
	if l.MaxUncompressed <= 0 {
		l.MaxUncompressed = DefaultLimits.MaxUncompressed
	}
	if l.MaxRatio <= 0 {
		l.MaxRatio = DefaultLimits.MaxRatio
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultLimits.MaxFiles
	}
	return l
}

// Verify checks the archive key (see the package documentation for what
// it checks) and returns its manifest.
func (d *Dir) Verify(key string, limits Limits) (*Manifest, error) {
	f, err := d.Open(key)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, keyErr("verify", key, err)
	}
	m, err := Verify(f, fi.Size(), limits)
	if err != nil {
		return nil, fmt.Errorf("backup: verify %s: %w", key, errors.Unwrap(err))
	}
	return m, nil
}

// Verify checks the archive held by r, of size bytes, reading every entry
// through once, and returns its manifest. A refused archive gives an
// [*ArchiveError] (matching [ErrInvalidArchive]).
func Verify(r io.ReaderAt, size int64, limits Limits) (*Manifest, error) {
	v, err := open(r, size, limits)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	for _, f := range v.entries {
		if err := v.check(f, io.Discard); err != nil {
			return nil, fmt.Errorf("backup: %w", err)
		}
	}
	if err := v.checkFiles(); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	return v.m, nil
}

// checkFiles runs the caller's Limits.Check on the verified entries.
func (v *verifier) checkFiles() error {
	if v.limits.Check == nil {
		return nil
	}
	files := Files{Manifest: v.m, byName: make(map[string]*zip.File, len(v.entries)), sizes: make(map[string]int64, len(v.want))}
	for _, f := range v.entries {
		files.byName[f.Name] = f
		files.sizes[f.Name] = v.want[f.Name].Size
	}
	err := v.limits.Check(files)
	if err != nil && !errors.Is(err, ErrInvalidArchive) {
		return fmt.Errorf("check the archive's files: %w", err)
	}
	return err
}

// verifier holds an archive whose structure and manifest are checked; its
// entries still need their content checked.
type verifier struct {
	limits  Limits
	m       *Manifest
	want    map[string]ManifestFile
	entries []*zip.File // the regular files, in archive order
	dirs    []string
	total   int64 // bytes decompressed so far
}

func invalid(format string, args ...any) error {
	return &ArchiveError{Reason: fmt.Sprintf(format, args...)}
}

// pocketBaseDB is the database at the root of every backup archive
// PocketBase makes (its pb_data, zipped).
const pocketBaseDB = "data.db"

// pocketBaseArchive is why an archive with PocketBase's database and no
// strongbox manifest is refused: it can be imported, not restored.
const pocketBaseArchive = "a PocketBase backup archive (data.db, no manifest.json): import it into a new data dir with `strongbox import pocketbase FILE`"

// open checks the archive's structure and its manifest: the zip
// directory within the limits, every entry's name and type, the manifest
// itself, and that the entries and the manifest's list agree.
func open(r io.ReaderAt, size int64, limits Limits) (*verifier, error) {
	limits = limits.WithDefaults()
	zr, err := openZip(r, size, limits)
	if err != nil {
		return nil, err
	}
	v := &verifier{limits: limits}
	seen, manifest, err := v.sortEntries(zr.File)
	if err != nil {
		return nil, err
	}
	if manifest == nil && seen[pocketBaseDB] {
		return nil, invalid("%s", pocketBaseArchive)
	}
	if err := v.readManifest(manifest); err != nil {
		return nil, err
	}
	if err := v.matchListing(seen); err != nil {
		return nil, err
	}
	return v, nil
}

// openZip reads the zip directory of r, refusing one with more entries
// than limits allow before and after reading it.
func openZip(r io.ReaderAt, size int64, limits Limits) (*zip.Reader, error) {
	if span, ok := centralDirSpan(r, size); ok && span > int64(limits.MaxFiles)*dirBytesPerFile {
		return nil, invalid("a central directory of %d bytes, more than %d entries need", span, limits.MaxFiles)
	}
	zr, err := zip.NewReader(r, size)
	if errors.Is(err, zip.ErrInsecurePath) {
		err = nil // checked in sortEntries, with a clearer message
	}
	if err != nil {
		return nil, invalid("not a zip file")
	}
	if len(zr.File) > limits.MaxFiles {
		return nil, invalid("%d entries, more than the limit of %d", len(zr.File), limits.MaxFiles)
	}
	return zr, nil
}

// sortEntries checks each entry's type and name, and sorts the entries
// into v.dirs, v.entries and the manifest (nil when there is none). It
// returns the set of names seen (folders without their trailing slash).
func (v *verifier) sortEntries(files []*zip.File) (seen map[string]bool, manifest *zip.File, err error) {
	seen = make(map[string]bool, len(files))
	for _, f := range files {
		name, isDir := f.Name, false
		mode := f.Mode()
		if mode.Type() == fs.ModeDir {
			isDir = true
			name = strings.TrimSuffix(name, "/")
		} else if !mode.IsRegular() {
			return nil, nil, invalid("entry %q is not a regular file (%v)", f.Name, mode.Type())
		}
		if !validEntryName(name) {
			return nil, nil, invalid("entry %q has an unsafe name", f.Name)
		}
		if seen[name] {
			return nil, nil, invalid("entry %q appears twice", f.Name)
		}
		seen[name] = true
		switch {
		case isDir:
			v.dirs = append(v.dirs, name)
		case name == ManifestName:
			manifest = f
		default:
			v.entries = append(v.entries, f)
		}
	}
	return seen, manifest, nil
}

// readManifest reads and decodes the manifest entry into v.m, and checks
// its list of files into v.want.
func (v *verifier) readManifest(manifest *zip.File) error {
	if manifest == nil {
		return invalid("no %s", ManifestName)
	}
	var buf bytes.Buffer
	if n, err := v.copyEntry(manifest, &buf, maxManifest+1); err != nil {
		return err
	} else if n > maxManifest {
		return invalid("%s is larger than %d bytes", ManifestName, maxManifest)
	}
	var m Manifest
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		return invalid("%s: %v", ManifestName, err)
	}
	if m.Format != Format {
		return invalid("%s: unknown format %d", ManifestName, m.Format)
	}
	v.m = &m
	v.want = make(map[string]ManifestFile, len(m.Files))
	var sum int64
	for _, mf := range m.Files {
		if !validEntryName(mf.Name) || mf.Name == ManifestName {
			return invalid("%s lists an unsafe name %q", ManifestName, mf.Name)
		}
		if _, dup := v.want[mf.Name]; dup {
			return invalid("%s lists %q twice", ManifestName, mf.Name)
		}
		if mf.Size < 0 || len(mf.SHA256) != 64 {
			return invalid("%s: bad size or checksum for %q", ManifestName, mf.Name)
		}
		sum += mf.Size
		if sum > v.limits.MaxUncompressed || sum < 0 {
			return invalid("files total more than the limit of %d bytes", v.limits.MaxUncompressed)
		}
		v.want[mf.Name] = mf
	}
	return nil
}

// matchListing checks that no file is also a folder of another name, and
// that the archive's files and the manifest's list are the same.
func (v *verifier) matchListing(seen map[string]bool) error {
	// A name that is a file must not also be a folder of another name:
	// extraction could not create both.
	parents := make(map[string]bool)
	for name := range seen {
		for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
			parents[dir] = true
		}
	}
	if parents[ManifestName] {
		return invalid("entry %q is both a file and a folder", ManifestName)
	}
	for _, f := range v.entries {
		if parents[f.Name] {
			return invalid("entry %q is both a file and a folder", f.Name)
		}
		if _, ok := v.want[f.Name]; !ok {
			return invalid("entry %q is not listed in %s", f.Name, ManifestName)
		}
	}
	for _, mf := range v.m.Files {
		if !seen[mf.Name] || slices.Contains(v.dirs, mf.Name) {
			return invalid("%q listed in %s is missing", mf.Name, ManifestName)
		}
	}
	return nil
}

// check copies one listed entry to w and checks its size and SHA-256.
func (v *verifier) check(f *zip.File, w io.Writer) error {
	want := v.want[f.Name]
	h := sha256.New()
	// Reading one byte past the listed size tells "too long" from "exact".
	n, err := v.copyEntry(f, io.MultiWriter(w, h), want.Size+1)
	if err != nil {
		return err
	}
	if n != want.Size {
		return invalid("entry %q is not the %d bytes %s lists", f.Name, want.Size, ManifestName)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != strings.ToLower(want.SHA256) {
		return invalid("entry %q: SHA-256 mismatch", f.Name)
	}
	return nil
}

// copyEntry decompresses f into w, at most limit bytes, counting the bytes
// actually produced (not what the headers claim) against the total and
// ratio limits. It returns the bytes written; an error writing to w is
// returned as it is, not as an invalid archive.
func (v *verifier) copyEntry(f *zip.File, w io.Writer, limit int64) (int64, error) {
	rc, err := f.Open()
	if err != nil {
		return 0, invalid("entry %q: %v", f.Name, err)
	}
	defer rc.Close()
	ratioMax := int64(math.MaxInt64 / 2)
	if r := v.limits.MaxRatio * float64(f.CompressedSize64); r < float64(ratioMax) {
		ratioMax = max(int64(r), ratioFloor)
	}
	budget := min(limit, v.limits.MaxUncompressed-v.total+1, ratioMax+1)
	cw := &countWriter{w: w}
	_, err = io.Copy(cw, io.LimitReader(rc, budget))
	v.total += cw.n
	switch {
	case cw.err != nil:
		return cw.n, cw.err
	case v.total > v.limits.MaxUncompressed:
		return cw.n, invalid("entries total more than the limit of %d bytes", v.limits.MaxUncompressed)
	case cw.n > ratioMax:
		return cw.n, invalid("entry %q expands more than %g times", f.Name, v.limits.MaxRatio)
	case err != nil:
		return cw.n, invalid("entry %q: %v", f.Name, err)
	}
	return cw.n, nil
}

// countWriter counts the bytes written through it and keeps the first
// write error, so that it can be told apart from a read error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// validEntryName reports whether name is a clean, local, slash-separated
// relative path: not empty, not absolute, no "." or ".." element, no
// backslash, colon or NUL (a Windows drive or stream, or a separator on
// another system), and filepath.IsLocal on this system.
func validEntryName(name string) bool {
	if name == "" || strings.ContainsAny(name, "\\:\x00") || strings.HasPrefix(name, "/") {
		return false
	}
	if path.Clean(name) != name {
		return false // "a//b", "a/./b", "a/", "./a"
	}
	for _, el := range strings.Split(name, "/") {
		if el == "." || el == ".." {
			return false
		}
	}
	return filepath.IsLocal(filepath.FromSlash(name))
}
