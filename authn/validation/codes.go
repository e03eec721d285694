package validation

import (
	"fmt"
	"strconv"
	"strings"
)

// The validation codes strongbox answers with, every one of them
// (TestCodesInOnePlace keeps them here). The interface document lists none
// for collections, records or settings (§7: "not shown"), so they are
// PocketBase v0.31.0's wherever it refuses the same input, and strongbox's
// own (the last group) where PocketBase would store or silently normalise a
// value strongbox cannot keep, or offers what strongbox does not.
const (
	// Generic checks (the ozzo-validation codes PocketBase reports).
	CodeRequired         = "validation_required"
	CodeNilOrNotEmpty    = "validation_nil_or_not_empty_required"
	CodeIsEmail          = "validation_is_email"
	CodeIsURL            = "validation_is_url"
	CodeInInvalid        = "validation_in_invalid"
	CodeMatchInvalid     = "validation_match_invalid"
	CodeLengthOutOfRange = "validation_length_out_of_range"
	CodeLengthTooLong    = "validation_length_too_long"
	CodeMinGreaterEqual  = "validation_min_greater_equal_than_required"
	CodeMaxLessEqual     = "validation_max_less_equal_than_required"
	CodeValuesMismatch   = "validation_values_mismatch"
	CodeNotUnique        = "validation_not_unique"
	CodeInvalidValue     = "validation_invalid_value"
	CodeInvalidFormat    = "validation_invalid_format"

	// Records.
	CodeMinTextConstraint   = "validation_min_text_constraint"
	CodeMaxTextConstraint   = "validation_max_text_constraint"
	CodeMinNumberConstraint = "validation_min_number_constraint"
	CodeMaxNumberConstraint = "validation_max_number_constraint"
	CodeOnlyIntConstraint   = "validation_only_int_constraint"
	CodeInvalidOldPassword  = "validation_invalid_old_password"
	CodePKChange            = "validation_pk_change"

	// Collections.
	CodeInvalidID            = "validation_invalid_id"
	CodeInvalidName          = "validation_invalid_name"
	CodeCollectionNameExists = "validation_collection_name_exists"
	CodeCollectionSystemRule = "validation_collection_system_rule_change"
	CodeCollectionSystemName = "validation_collection_system_name_change"
	CodeCollectionSystemFlag = "validation_collection_system_flag_change"
	CodeCollectionTypeChange = "validation_collection_type_change"
	CodeSystemFieldChange    = "validation_system_field_change"
	CodeReservedFieldName    = "validation_reserved_field_name"
	CodeDuplicatedFieldName  = "validation_duplicated_field_name"
	CodeInvalidIdentityField = "validation_invalid_identity_field"
	CodeMissingField         = "validation_missing_field"
	// CodeInvalidRule: a rule (mfa.rule) that does not parse or names a
	// field the collection does not expose to rules.
	CodeInvalidRule        = "validation_invalid_rule"
	CodeMFANotEnoughAuths  = "validation_mfa_not_enough_auths"
	CodeMissingProvider    = "validation_missing_provider"
	CodeDuplicatedProvider = "validation_duplicated_provider"
	CodeInvalidProvider    = "validation_invalid_provider" // auth-with-oauth2 provider

	// Settings.
	CodeInvalidCron   = "validation_invalid_cron"
	CodeInvalidHeader = "validation_invalid_header"
	CodeIsHost        = "validation_is_host" // smtp.host, smtp.localName
	// CodeInvalidAuthCollection: the collection of a test email.
	CodeInvalidAuthCollection = "validation_invalid_auth_collection"
	// CodeUnsupported: a setting PocketBase has and strongbox does not
	// implement (S3 storage), refused rather than accepted and ignored.
	CodeUnsupported              = "validation_unsupported"
	CodeConflictingRateLimitRule = "validation_conflicting_rate_limit_rule"

	// Backups: PocketBase's checks of create and upload.
	CodeBackupNameExists = "validation_backup_name_exists"
	CodeInvalidMimeType  = "validation_invalid_mime_type"
	CodeFileSizeLimit    = "validation_file_size_limit"

	// Account flows: the tokens of verification, password reset and email
	// change, and the new email and password they are confirmed with,
	// as PocketBase reports them.
	CodeNotInInvalid            = "validation_not_in_invalid"
	CodeInvalidToken            = "validation_invalid_token"
	CodeInvalidTokenClaims      = "validation_invalid_token_claims"
	CodeInvalidTokenPayload     = "validation_invalid_token_payload"
	CodeTokenCollectionMismatch = "validation_token_collection_mismatch"
	CodeTokenEmailMismatch      = "validation_token_email_mismatch"
	CodeExistingTokenEmail      = "validation_existing_token_email"
	CodeInvalidNewEmail         = "validation_invalid_new_email"
	CodeInvalidPassword         = "validation_invalid_password"

	// strongbox's own: changes it refuses where PocketBase would store or
	// silently normalise a value, and what it does not support.
	CodeReadOnly               = "validation_read_only"
	CodeUnknownField           = "validation_unknown_field"
	CodeUnsupportedValue       = "validation_unsupported_value"
	CodeBuiltinFieldChange     = "validation_builtin_field_change"
	CodeSuperusersOAuth2       = "validation_superusers_oauth2"
	CodeSuperusersPasswordAuth = "validation_superusers_password_auth"
	CodeSuperusersVerified     = "validation_superusers_verified"
	CodeSuperusersOTPMFA       = "validation_superusers_otp_mfa"
	CodeFileUnsupported        = "validation_file_unsupported"
	CodeInvalidBackup          = "validation_invalid_backup"
	// CodeInvalidFilter: the filter of a logs query that does not parse
	// or names a field logs do not have (data.filter, beside §7's message).
	CodeInvalidFilter = "validation_invalid_filter"
)

// The failures that more than one check reports, with PocketBase's
// messages (built from their params where they have any). Each call returns
// a new *Error, which the caller may keep as its own sentinel.

// InvalidRule is a rule that does not compile; raw says why. The message
// is PocketBase's: "Invalid rule. Raw error: " and the reason, ended
// with a period.
func InvalidRule(raw string) *Error {
	return New(CodeInvalidRule, "Invalid rule. Raw error: "+raw+".")
}

// NilOrNotEmpty is a value that must be null or not empty, sent empty
// (a manageRule of ""): "Cannot be blank.".
func NilOrNotEmpty() *Error { return New(CodeNilOrNotEmpty, "Cannot be blank.") }

// Required is a blank value: "Cannot be blank.".
func Required() *Error { return New(CodeRequired, "Cannot be blank.") }

// IsEmail is a value that is no email address.
func IsEmail() *Error { return New(CodeIsEmail, "Must be a valid email address.") }

// IsURL is a value that is no URL.
func IsURL() *Error { return New(CodeIsURL, "Must be a valid URL.") }

// InInvalid is a value outside the allowed set; params may be nil.
func InInvalid(params map[string]any) *Error {
	return &Error{Code: CodeInInvalid, Message: "Must be a valid value.", Params: params}
}

// IsHost is a value that is neither an IP address nor a DNS name.
func IsHost() *Error { return New(CodeIsHost, "Must be a valid IP address or DNS name.") }

// MatchInvalid is a value that does not match the required pattern.
func MatchInvalid() *Error { return New(CodeMatchInvalid, "Must be in a valid format.") }

// LengthOutOfRange is a length outside min..max.
func LengthOutOfRange(min, max int) *Error {
	return &Error{Code: CodeLengthOutOfRange, Message: fmt.Sprintf("The length must be between %d and %d.", min, max), Params: map[string]any{"min": min, "max": max}}
}

// LengthTooLong is a length over max.
func LengthTooLong(max int) *Error {
	return New(CodeLengthTooLong, fmt.Sprintf("The length must be no more than %d.", max))
}

// MinGreaterEqual is a number under threshold.
func MinGreaterEqual(threshold int64) *Error {
	return &Error{Code: CodeMinGreaterEqual, Message: fmt.Sprintf("Must be no less than %d.", threshold), Params: map[string]any{"threshold": threshold}}
}

// MaxLessEqual is a number over threshold.
func MaxLessEqual(threshold int64) *Error {
	return &Error{Code: CodeMaxLessEqual, Message: fmt.Sprintf("Must be no greater than %d.", threshold), Params: map[string]any{"threshold": threshold}}
}

// ValuesMismatch is a value that must equal another (or its old value).
func ValuesMismatch() *Error { return New(CodeValuesMismatch, "Values don't match.") }

// NotUnique is a value another object already has.
func NotUnique() *Error { return New(CodeNotUnique, "Value must be unique.") }

// InvalidValue is a value of the wrong type.
func InvalidValue() *Error { return New(CodeInvalidValue, "Invalid value.") }

// InvalidFormat is a text that does not match its field's pattern.
func InvalidFormat() *Error { return New(CodeInvalidFormat, "Invalid value format.") }

// MinText is a text shorter than n characters.
func MinText(n int) *Error {
	return &Error{Code: CodeMinTextConstraint, Message: fmt.Sprintf("Must be at least %d character(s).", n), Params: map[string]any{"min": n}}
}

// MinPassword is a password shorter than n characters. PocketBase's
// password field words it as MinText does, without params.
func MinPassword(n int) *Error {
	return New(CodeMinTextConstraint, fmt.Sprintf("Must be at least %d character(s).", n))
}

// MaxPassword is a password longer than n bytes, in the words of
// PocketBase's password field ("less than", without params).
func MaxPassword(n int) *Error {
	return New(CodeMaxTextConstraint, fmt.Sprintf("Must be less than %d character(s).", n))
}

// MaxText is a text longer than n characters.
func MaxText(n int) *Error {
	return &Error{Code: CodeMaxTextConstraint, Message: fmt.Sprintf("Must be no more than %d character(s).", n), Params: map[string]any{"max": n}}
}

// MinNumber is a number under v.
func MinNumber(v float64) *Error {
	return &Error{Code: CodeMinNumberConstraint, Message: fmt.Sprintf("Must be larger than %s.", formatNumber(v)), Params: map[string]any{"min": v}}
}

// MaxNumber is a number over v.
func MaxNumber(v float64) *Error {
	return &Error{Code: CodeMaxNumberConstraint, Message: fmt.Sprintf("Must be less than %s.", formatNumber(v)), Params: map[string]any{"max": v}}
}

func formatNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// BackupNameExists is the name of a backup to create that another archive
// already has.
func BackupNameExists() *Error {
	return New(CodeBackupNameExists, "The backup file name is invalid or already exists.")
}

// BackupFileExists is an uploaded backup whose file name another archive
// already has.
func BackupFileExists() *Error {
	return New(CodeBackupNameExists, "Backup file with the specified name already exists.")
}

// InvalidMimeType is an uploaded file, named name, whose content is none
// of the allowed types.
func InvalidMimeType(name string, allowed ...string) *Error {
	return New(CodeInvalidMimeType, fmt.Sprintf("%q mime type must be one of: %s.", name, strings.Join(allowed, ", ")))
}

// FileSizeLimit is an uploaded file larger than max bytes.
func FileSizeLimit(max int64) *Error {
	return &Error{Code: CodeFileSizeLimit, Message: fmt.Sprintf("The maximum allowed file size is %d bytes.", max), Params: map[string]any{"maxSize": max}}
}

// InvalidBackup is an uploaded zip that is not a strongbox archive;
// reason says why, in terms of the archive's own entries.
func InvalidBackup(reason string) *Error {
	return New(CodeInvalidBackup, "The file is not a valid backup archive: "+reason+".")
}

// InvalidFilter is a filter that does not parse or compile: msg says
// what is wrong or what was expected; offset, when not negative, is the
// byte offset in the filter where it is (params.offset), and the message
// ends with it ("… (at offset 8)."). A negative offset is a failure with
// no position.
func InvalidFilter(msg string, offset int) *Error {
	if offset < 0 {
		return New(CodeInvalidFilter, "Invalid filter: "+msg+".")
	}
	return &Error{Code: CodeInvalidFilter, Message: fmt.Sprintf("Invalid filter: %s (at offset %d).", msg, offset),
		Params: map[string]any{"offset": offset}}
}

// FileUnsupported is a file sent for a record field: strongbox stores no
// files, whether the file comes as a multipart part or as a value.
func FileUnsupported() *Error {
	return New(CodeFileUnsupported, "File uploads are not supported by this server.")
}

// NotInInvalid is a value that must differ from the ones listed (a new
// email equal to the current one).
func NotInInvalid() *Error { return New(CodeNotInInvalid, "Must not be in list.") }

// InvalidToken is a token that does not verify: malformed, tampered,
// expired, of another type, or of a record that no longer accepts it.
func InvalidToken() *Error { return New(CodeInvalidToken, "Invalid or expired token.") }

// TokenMissingEmail is a verification token without its email claim.
func TokenMissingEmail() *Error { return New(CodeInvalidTokenClaims, "Missing email token claim.") }

// TokenMissingNewEmail is an email-change token without its newEmail claim.
func TokenMissingNewEmail() *Error {
	return New(CodeInvalidTokenPayload, "Invalid token payload - newEmail must be set.")
}

// TokenCollectionMismatch is a token of a record of another collection
// than the one in the path.
func TokenCollectionMismatch() *Error {
	return New(CodeTokenCollectionMismatch, "The provided token is for different auth collection.")
}

// TokenEmailMismatch is a token issued for an email the record no longer has.
func TokenEmailMismatch() *Error {
	return New(CodeTokenEmailMismatch, "The record email doesn't match with the requested token claims.")
}

// ExistingTokenEmail is an email-change token whose new address another
// record of the collection has taken since it was issued.
func ExistingTokenEmail(email string) *Error {
	return New(CodeExistingTokenEmail, "The new email address is already registered: "+email+".")
}

// InvalidNewEmail is a new email address another record already has.
func InvalidNewEmail() *Error { return New(CodeInvalidNewEmail, "Invalid new email address.") }

// InvalidPassword is a wrong current password where a change asks for it.
func InvalidPassword() *Error {
	return New(CodeInvalidPassword, "Missing or invalid auth record password.")
}
