package settings

import (
	"fmt"

	"strongbox/authn/validation"
	"strongbox/backup/age"
)

// Encryption is backups.encryption: the age keys of the archives (package
// strongbox/backup, "Encryption"). Identity is the private key,
// "AGE-SECRET-KEY-1…": write-only like the S3 secret, stored but never
// answered; the answer shows Recipient, its public key, instead.
// Recipients are more public keys ("age1…") that every archive is also
// encrypted to, such as an offline key kept for disaster recovery.
type Encryption struct {
	Enabled    bool     `json:"enabled"`
	Identity   string   `json:"identity,omitempty"`
	Recipient  string   `json:"recipient,omitempty"` // answers only: Identity's public key
	Recipients []string `json:"recipients"`
}

// MaxRecipients bounds backups.encryption.recipients: each is a stanza of
// every archive's header.
const MaxRecipients = 32

// public returns the section without its identity, with its recipient.
func (e Encryption) public() Encryption {
	e.Recipient = ""
	if id, err := age.ParseX25519Identity(e.Identity); err == nil {
		e.Recipient = id.Recipient().String()
	}
	e.Identity = ""
	e.Recipients = append([]string{}, e.Recipients...)
	return e
}

// keepSecret keeps the stored identity when an update leaves it empty,
// and drops the recipient an answer showed (it is derived, not stored).
func (e *Encryption) keepSecret(cur Encryption) {
	if e.Identity == "" {
		e.Identity = cur.Identity
	}
	e.Recipient = ""
}

// validate checks the keys: the identity an X25519 identity, required
// when enabled, and every recipient an X25519 recipient. The messages
// never repeat the identity.
func (e Encryption) validate() validation.Errors {
	errs := validation.Errors{}
	switch {
	case e.Identity != "":
		if _, err := age.ParseX25519Identity(e.Identity); err != nil {
			errs["identity"] = validation.New(validation.CodeInvalidValue, "Must be an age identity (AGE-SECRET-KEY-1…).")
		}
	case e.Enabled:
		errs["identity"] = errRequired
	}
	if len(e.Recipients) > MaxRecipients {
		errs["recipients"] = validation.New(validation.CodeInvalidValue, fmt.Sprintf("At most %d recipients.", MaxRecipients))
	}
	for i, r := range e.Recipients {
		if _, err := age.ParseX25519Recipient(r); err != nil {
			errs["recipients"] = validation.New(validation.CodeInvalidValue, fmt.Sprintf("Recipient %d must be an age recipient (age1…).", i+1))
			break
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}

// Keys returns the keys of the section: the identity, which opens
// encrypted archives whether or not encryption is enabled (an archive
// made while it was stays restorable), nil if none; and, only while
// enabled, the recipients archives are encrypted to: the identity's own
// public key and Recipients. The section is valid (validate).
func (e Encryption) Keys() (*age.X25519Identity, []age.Recipient) {
	id, err := age.ParseX25519Identity(e.Identity)
	if err != nil {
		return nil, nil
	}
	if !e.Enabled {
		return id, nil
	}
	recipients := []age.Recipient{id.Recipient()}
	for _, s := range e.Recipients {
		if r, err := age.ParseX25519Recipient(s); err == nil {
			recipients = append(recipients, r)
		}
	}
	return id, recipients
}
