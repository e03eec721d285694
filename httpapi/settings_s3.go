package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

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
// error). The secret, should any error quote it, is masked.
func s3ErrorText(err error, secret string) string {
	text := err.Error()
	if c, ok := errors.AsType[s3Coded](err); ok {
		code, msg := c.S3Code()
		text = code + ": " + msg
		if pe, ok := errors.AsType[*backup.ProbeError](err); ok {
			text = pe.Step + ": " + text
		}
	}
	if secret != "" {
		text = strings.ReplaceAll(text, secret, "***")
	}
	return text
}
