package conformance

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
)

// Crafting strongbox archives (BKP-UPLOAD-008): the suite rewrites an
// archive the server made, as a client could, so that its manifest still
// agrees with every file. The format is strongbox's (package backup's
// doc): a zip of the data dir's files plus manifest.json, {"format":1,
// "strongbox", "created", "files":[{"name","size","sha256"}]}; a journal
// starts with an 8-byte header, then frames of a 12-byte head and a
// payload.

const (
	codeInvalidBackup = "validation_invalid_backup"
	manifestName      = "manifest.json"
	// journalFirstRecordByte is the offset of a byte inside a strongbox
	// journal's first record: past the 8-byte header and the first
	// frame's 12-byte head. An auth journal holds a record per
	// collection, so valid records follow it.
	journalFirstRecordByte = 8 + 12 + 4
)

// archiveManifest is strongbox's manifest.json.
type archiveManifest struct {
	Format    int            `json:"format"`
	Strongbox string         `json:"strongbox"`
	Created   string         `json:"created"`
	Files     []manifestFile `json:"files"`
}

type manifestFile struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// damageArchive returns the archive data with the byte at offset of its
// file name inverted, and a manifest listing that file's new SHA-256. An
// archive not in strongbox's layout (a server of another make, such as
// PocketBase) cannot be damaged so: that is a skip, with what the archive
// lacks, not an error of the server's.
func damageArchive(data []byte, name string, offset int) ([]byte, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, notStrongboxArchive("it is not a zip (%v)", err)
	}
	files := map[string][]byte{}
	var m archiveManifest
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("fixture: read %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("fixture: read %s: %w", f.Name, err)
		}
		if f.Name == manifestName {
			if err := json.Unmarshal(b, &m); err != nil {
				return nil, notStrongboxArchive("its %s is not JSON (%v)", manifestName, err)
			}
			continue
		}
		files[f.Name] = b
	}
	if m.Format == 0 {
		return nil, notStrongboxArchive("it has no %s with a format", manifestName)
	}
	b, ok := files[name]
	if !ok || len(b) <= offset {
		return nil, notStrongboxArchive("it has no %s of more than %d bytes", name, offset)
	}
	b[offset] ^= 0xff
	for i, mf := range m.Files {
		if mf.Name == name {
			sum := sha256.Sum256(b)
			m.Files[i].SHA256 = hex.EncodeToString(sum[:])
		}
	}
	return writeArchive(m, files)
}

// notStrongboxArchive is the skip of a check whose fixture is a strongbox
// archive the server made, when the server's archive is not one.
func notStrongboxArchive(format string, args ...any) error {
	return Skipf("fixture cannot be made on this server: its backup archive is not in strongbox's layout: "+format, args...)
}

// emptyArchive is an archive whose manifest lists no files.
func emptyArchive() []byte {
	b, _ := writeArchive(archiveManifest{Format: 1, Strongbox: "conformance", Created: "2026-01-01T00:00:00Z", Files: []manifestFile{}}, nil)
	return b
}

// writeArchive zips the files m lists and m as manifest.json.
func writeArchive(m archiveManifest, files map[string][]byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, mf := range m.Files {
		w, err := zw.Create(mf.Name)
		if err != nil {
			return nil, err
		}
		w.Write(files[mf.Name])
	}
	w, err := zw.Create(manifestName)
	if err != nil {
		return nil, err
	}
	if err := json.NewEncoder(w).Encode(m); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
