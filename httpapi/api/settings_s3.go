package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"strongbox/authn/validation"
	"strongbox/backup"
)

// Messages of POST /api/settings/test/s3, PocketBase v0.31.0's: a bad
// body is msgTestS3Failed with the field errors, a failed test the same
// message with "Raw error: " and the cause on a line of its own.
const (
	msgTestS3Failed   = "Failed to test the S3 filesystem."
	msgTestS3Raw      = "Failed to test the S3 filesystem. Raw error: \n"
	msgS3NotEnabled   = "S3 storage filesystem is not enabled."
	msgS3StorageNoFS  = "S3 storage filesystem is not enabled: strongbox stores no uploaded files, so it has no S3 file storage to test."
	testS3Timeout     = 25 * time.Second
	testS3Backups     = "backups"
	testS3FileStorage = "storage"
)

// s3Coded is the typed error of the S3 client (strongbox/backup/s3's
// *Error, whose Code and Message fields this method returns): the error
// code and message of the S3 answer.
type s3Coded interface {
	error
	S3Code() (code, message string)
}

// handleSettingsTestS3 handles POST /api/settings/test/s3 (superusers):
// body {"filesystem": "backups" | "storage"}, as PocketBase v0.31.0 takes
// it. For "backups" it tests the bucket of the stored settings
// backups.s3, as PocketBase does (not one sent in the body): 204 when it
// can be listed, and a probe object put and deleted
// (backup.ProbeBucket); otherwise 400 with the step that failed and the
// S3 error code and message (AccessDenied, NoSuchBucket,
// SignatureDoesNotMatch …) or the connection error, never the secret. S3
// backups not enabled, and "storage" (strongbox stores no files, so its
// s3 section is never enabled), are PocketBase's "not enabled" 400.
func (s *Server) handleSettingsTestS3(w http.ResponseWriter, r *http.Request) error {
	if err := requireSuperuser(r, msgNotAllowed); err != nil {
		return err
	}
	b, err := bind(r)
	if err != nil {
		return err
	}
	fsys, err := b.str("filesystem")
	if err != nil {
		return err
	}
	switch fsys {
	case "":
		return errValidation(msgTestS3Failed, validation.Errors{"filesystem": validation.Required()})
	case testS3FileStorage:
		return errBadRequest(msgTestS3Raw+msgS3StorageNoFS, nil)
	case testS3Backups:
	default:
		return errValidation(msgTestS3Failed, validation.Errors{"filesystem": validation.InInvalid(nil)})
	}
	cfg := s.settings.Get().Backups.S3
	if !cfg.Enabled || s.backups == nil {
		return errBadRequest(msgTestS3Raw+msgS3NotEnabled, nil)
	}
	ctx, cancel := context.WithTimeout(r.Context(), testS3Timeout)
	defer cancel()
	if err := s.backups.TestS3(ctx); err != nil {
		text := s3ErrorText(err, cfg.Secret)
		s.log.Warn("backup: S3 test failed", auditAttrs(r, "bucket", cfg.Bucket, "err", text)...)
		return errBadRequest(msgTestS3Raw+text, errors.New(text))
	}
	return noContent(w)
}

// s3ErrorText is err in words: the step of the probe that failed, then
// the S3 error code and message, or the error's own text (a connection
// error). The secret, should any error quote it, is masked (maskSecret).
func s3ErrorText(err error, secret string) string {
	text := err.Error()
	if c, ok := errors.AsType[s3Coded](err); ok {
		code, msg := c.S3Code()
		text = code + ": " + msg
		if pe, ok := errors.AsType[*backup.ProbeError](err); ok {
			text = pe.Step + ": " + text
		}
	}
	return maskSecret(text, secret)
}

// minMaskedSecret is the length from which a secret is masked wherever it
// occurs in a text: a random string this long does not occur in words by
// chance (backup/s3 masks the service's messages from the same length).
const minMaskedSecret = 8

// maskSecret replaces the occurrences of secret in text with "***": every
// one when the secret has minMaskedSecret bytes or more, else only those
// that stand as a word of their own (no letter, digit or '_' right before
// or after), so that a short secret (one letter, say) does not mask that
// letter inside every word of the message.
func maskSecret(text, secret string) string {
	if secret == "" {
		return text
	}
	if len(secret) >= minMaskedSecret {
		return strings.ReplaceAll(text, secret, "***")
	}
	var b strings.Builder
	written := 0 // text[:written] is in b
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], secret)
		if j < 0 {
			break
		}
		start, end := i+j, i+j+len(secret)
		before, _ := utf8.DecodeLastRuneInString(text[:start])
		after, _ := utf8.DecodeRuneInString(text[end:])
		if isWordRune(before) || isWordRune(after) {
			i = start + 1 // inside a word: not the secret
			continue
		}
		b.WriteString(text[written:start])
		b.WriteString("***")
		written, i = end, end
	}
	b.WriteString(text[written:])
	return b.String()
}

// isWordRune reports whether r is a letter, a digit or '_'.
func isWordRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
