package authn

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"strongbox/authn/validation"
)

// TestAuthOrigins: SaveAuthOrigin creates an origin per fingerprint and
// touches a known one, keeps at most MaxAuthOrigins per record (the
// oldest go), and every change is durable; DeleteAuthOriginID too.
func TestAuthOrigins(t *testing.T) {
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")

	first, isNew, err := s.SaveAuthOrigin(users, ann.ID, "fp0")
	if err != nil || !isNew || first.Fingerprint != "fp0" || first.RecordID != ann.ID || first.CollectionID != users.ID {
		t.Fatalf("first origin = %+v, %v, %v", first, isNew, err)
	}
	clk.t = clk.t.Add(time.Minute)
	again, isNew, err := s.SaveAuthOrigin(users, ann.ID, "fp0")
	if err != nil || isNew || again.ID != first.ID || !again.Updated.Equal(clk.t) || !again.Created.Equal(first.Created) {
		t.Fatalf("known origin = %+v, %v, %v; want %s touched", again, isNew, err, first.ID)
	}
	for i := 1; i <= MaxAuthOrigins; i++ {
		clk.t = clk.t.Add(time.Minute)
		if _, _, err := s.SaveAuthOrigin(users, ann.ID, "fp"+string(rune('0'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.SaveAuthOrigin(users, bob.ID, "fp0"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.SaveAuthOrigin(users, "nosuchrecord000", "fp0"); !errors.Is(err, ErrNotFound) {
		t.Errorf("origin of an unknown record: %v, want ErrNotFound", err)
	}
	fps := func(s *Store) []string {
		var out []string
		for _, o := range s.AuthOrigins(users, ann.ID) {
			out = append(out, o.Fingerprint)
		}
		return out
	}
	want := []string{"fp1", "fp2", "fp3", "fp4", "fp5"}
	if got := fps(s); !slices.Equal(got, want) {
		t.Fatalf("ann's origins = %v, want %v (the oldest dropped past %d)", got, want, MaxAuthOrigins)
	}
	victim := s.AuthOrigins(users, ann.ID)[0].ID
	if err := s.DeleteAuthOriginID(victim); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAuthOriginID(victim); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete = %v, want ErrNotFound", err)
	}
	s.Close()

	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	if got := fps(s2); !slices.Equal(got, want[1:]) {
		t.Errorf("after reopen ann's origins = %v, want %v", got, want[1:])
	}
	if n := len(s2.AllAuthOrigins()); n != len(want) {
		t.Errorf("after reopen %d origins in all, want %d", n, len(want))
	}
	s2.mu.Lock()
	err = s2.compact()
	s2.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if got := fps(s2); !slices.Equal(got, want[1:]) {
		t.Errorf("after compaction ann's origins = %v, want %v", got, want[1:])
	}
}

// TestAuthOriginsGo: a record's origins go with its password (as in
// PocketBase) and with the record, durably.
func TestAuthOriginsGo(t *testing.T) {
	ctx := context.Background()
	s, clk, path := newTestStore(t)
	users, _ := s.Collection(UsersName)
	ann := signUp(t, s, "ann@example.com", "password1")
	bob := signUp(t, s, "bob@example.com", "password1")
	cat := signUp(t, s, "cat@example.com", "password1")
	for _, r := range []*Record{ann, bob, cat} {
		if _, _, err := s.SaveAuthOrigin(users, r.ID, "fp"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.UpdateRecord(ctx, users, ann.ID, RecordInput{Manager: true, Values: map[string]any{"password": "password2", "passwordConfirm": "password2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.UpdateRecord(ctx, users, cat.ID, RecordInput{Manager: true, Values: map[string]any{"name": "Cat"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRecord(users, bob.ID); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		all := s.AllAuthOrigins()
		if len(all) != 1 || all[0].RecordID != cat.ID {
			t.Errorf("origins = %+v, want only cat's (ann changed her password, bob is gone)", all)
		}
	}
	check(s)
	s.Close()
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	check(s2)
}

// TestSystemMFAOTPRecords: the sessions and OTPs as _mfas and _otps
// records, never with a code, hash or salt; deleting one through
// DeleteMFAID or DeleteOTPID ends it for sign-in, durably.
func TestSystemMFAOTPRecords(t *testing.T) {
	s, clk, path := newTestStore(t)
	c := enableOTP(t, s, true)
	ann := signUp(t, s, "ann@example.com", "password1")
	otpID, code, err := s.CreateOTP(c, ann)
	if err != nil {
		t.Fatal(err)
	}
	mfaID, err := s.beginMFA(c, ann, MethodPassword)
	if err != nil {
		t.Fatal(err)
	}
	o := s.otps[otpID]
	created := Time{clk.t}
	tests := []struct {
		name string
		got  []map[string]any
		want map[string]any
	}{
		{"_otps", s.OTPRecords(), map[string]any{
			"id": otpID, "collectionId": OTPsCollectionID, "collectionName": OTPsName, "collectionRef": c.ID, "recordRef": ann.ID,
			"password": "", "sentTo": "", "created": created, "updated": created,
		}},
		{"_mfas", s.MFARecords(), map[string]any{
			"id": mfaID, "collectionId": MFAsCollectionID, "collectionName": MFAsName, "collectionRef": c.ID, "recordRef": ann.ID,
			"method": MethodPassword, "created": created, "updated": created,
		}},
	}
	for _, tt := range tests {
		if len(tt.got) != 1 {
			t.Fatalf("%s: %d records, want 1", tt.name, len(tt.got))
		}
		b, _ := json.Marshal(tt.got[0])
		w, _ := json.Marshal(tt.want)
		if string(b) != string(w) {
			t.Errorf("%s record = %s, want %s", tt.name, b, w)
		}
		for _, secret := range []string{code, o.Hash, o.Salt} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s record %s shows a secret %q", tt.name, b, secret)
			}
		}
	}

	if err := s.DeleteOTPID(otpID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMFAID(mfaID); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{s.DeleteOTPID(otpID), s.DeleteMFAID(mfaID)} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("second delete = %v, want ErrNotFound", err)
		}
	}
	s.Close()
	s2 := openTestStore(t, path, clk)
	defer s2.Close()
	if _, err := s2.AuthWithOTP(c, otpID, code); !errors.Is(err, ErrOTPInvalid) {
		t.Errorf("sign-in with a deleted OTP = %v, want ErrOTPInvalid", err)
	}
	if err := s2.finishMFA(c, ann, mfaID, MethodOTP, nil); !errors.Is(err, ErrMFAInvalid) {
		t.Errorf("MFA with a deleted session = %v, want ErrMFAInvalid", err)
	}
	if n, m := len(s2.OTPRecords()), len(s2.MFARecords()); n != 0 || m != 0 {
		t.Errorf("after reopen %d OTPs and %d MFA sessions, want none", n, m)
	}
}

// TestSystemCollections: the four system base collections as PocketBase
// defines them, fixed: an update that changes nothing answers them as
// they are, any change is refused, they cannot be deleted, and no
// collection may take their ids or names.
func TestSystemCollections(t *testing.T) {
	s, _, _ := newTestStore(t)
	su, _ := s.Collection(SuperusersName)
	var names []string
	for _, c := range s.SystemCollections() {
		names = append(names, c.Name)
		if c.Type != TypeBase || !c.System || c.Created != su.Created || c.AuthOptions != nil {
			t.Errorf("%s: type %s, system %v, created %v; want base, system, created with _superusers", c.Name, c.Type, c.System, c.Created)
		}
		if c.ListRule == nil || *c.ListRule != SystemOwnerRule || c.CreateRule != nil || c.UpdateRule != nil {
			t.Errorf("%s: rules %v %v %v", c.Name, c.ListRule, c.CreateRule, c.UpdateRule)
		}
		if got, ok := s.SystemCollection(strings.ToUpper(c.Name)); !ok || got.ID != c.ID {
			t.Errorf("SystemCollection(%s) = %v, %v", strings.ToUpper(c.Name), got, ok)
		}
	}
	if want := []string{MFAsName, OTPsName, ExternalAuthsName, AuthOriginsName}; !slices.Equal(names, want) {
		t.Errorf("system collections %v, want %v", names, want)
	}
	otps, _ := s.SystemCollection(OTPsName)
	b, _ := json.Marshal(otps.Fields)
	const wantFields = `[{"autogeneratePattern":"[a-z0-9]{15}","hidden":false,"id":"text3208210256","max":15,"min":15,"name":"id","pattern":"^[a-z0-9]+$","presentable":false,"primaryKey":true,"required":true,"system":true,"type":"text"},` +
		`{"autogeneratePattern":"","hidden":false,"id":"text455797646","max":0,"min":0,"name":"collectionRef","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"},` +
		`{"autogeneratePattern":"","hidden":false,"id":"text127846527","max":0,"min":0,"name":"recordRef","pattern":"","presentable":false,"primaryKey":false,"required":true,"system":true,"type":"text"},` +
		`{"cost":8,"hidden":true,"id":"password901924565","max":0,"min":0,"name":"password","pattern":"","presentable":false,"required":true,"system":true,"type":"password"},` +
		`{"autogeneratePattern":"","hidden":true,"id":"text3866985172","max":0,"min":0,"name":"sentTo","pattern":"","presentable":false,"primaryKey":false,"required":false,"system":true,"type":"text"},` +
		`{"hidden":false,"id":"autodate2990389176","name":"created","onCreate":true,"onUpdate":false,"presentable":false,"system":true,"type":"autodate"},` +
		`{"hidden":false,"id":"autodate3332085495","name":"updated","onCreate":true,"onUpdate":true,"presentable":false,"system":true,"type":"autodate"}]`
	if string(b) != wantFields {
		t.Errorf("_otps fields =\n%s\nwant (PocketBase v0.31.0's)\n%s", b, wantFields)
	}

	mfas, _ := s.SystemCollection(MFAsName)
	if got, err := s.UpdateCollection(mfas, input(t, `{"name":"_mfas","listRule":"`+SystemOwnerRule+`"}`)); err != nil || got.ID != mfas.ID {
		t.Errorf("update that changes nothing = %v, %v", got, err)
	}
	updates := []struct{ body, key, code string }{
		{`{"listRule":null}`, "listRule", validation.CodeCollectionSystemRule},
		{`{"deleteRule":""}`, "deleteRule", validation.CodeCollectionSystemRule},
		{`{"name":"mfas2"}`, "name", validation.CodeCollectionSystemName},
		{`{"indexes":[]}`, "indexes", validation.CodeUnsupportedValue},
		{`{"fields":[{"name":"extra","type":"text"}]}`, "fields", validation.CodeUnsupportedValue},
	}
	for _, u := range updates {
		_, err := s.UpdateCollection(mfas, input(t, u.body))
		if code := errCode(err, u.key); code != u.code {
			t.Errorf("update %s: %v; want %s on %s", u.body, err, u.code, u.key)
		}
	}
	if err := s.DeleteCollection(mfas); !errors.Is(err, ErrSystemCollection) {
		t.Errorf("delete _mfas = %v, want ErrSystemCollection", err)
	}
	users, _ := s.Collection(UsersName)
	creates := []struct{ body, key string }{
		{`{"id":"` + OTPsCollectionID + `","name":"x1","type":"auth"}`, "id"},
	}
	for _, c := range creates {
		if _, err := s.CreateCollection(input(t, c.body)); errCode(err, c.key) == "" {
			t.Errorf("create %s = %v, want an error on %s", c.body, err, c.key)
		}
	}
	if _, err := s.UpdateCollection(users, input(t, `{"name":"_authOrigins"}`)); errCode(err, "name") != validation.CodeCollectionNameExists {
		t.Errorf("renaming users to _authOrigins = %v, want %s", err, validation.CodeCollectionNameExists)
	}
}

// errCode returns the code of err's validation error on key, or "".
func errCode(err error, key string) string {
	var errs validation.Errors
	if !errors.As(err, &errs) {
		return ""
	}
	switch e := errs[key].(type) {
	case *validation.Error:
		return e.Code
	case validation.Errors:
		for _, v := range e {
			if ve, ok := v.(*validation.Error); ok {
				return ve.Code
			}
			if nested, ok := v.(validation.Errors); ok {
				for _, w := range nested {
					if ve, ok := w.(*validation.Error); ok {
						return ve.Code
					}
				}
			}
		}
	}
	return ""
}
