package authn

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHiddenFieldInput: CreateRecord and UpdateRecord store a hidden
// custom field only from a superuser (RecordInput.Superuser), whatever
// Manager says, and drop anyone else's value without an error; Public
// shows it only when asked to, and never the password or token key.
func TestHiddenFieldInput(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newTestStore(t)
	c, err := s.CreateCollection(input(t, `{"name":"members","type":"auth","fields":[`+
		`{"name":"name","type":"text"},{"name":"role","type":"text","hidden":true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name             string
		superuser        bool
		manager          bool
		wantCreate, want any
	}{
		{"guest", false, false, "", ""},
		{"manager", false, true, "", ""},
		{"superuser", true, true, "admin", "boss"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			values := map[string]any{"email": tt.name + "@example.com", "password": "password1",
				"passwordConfirm": "password1", "name": "N", "role": "admin"}
			r, err := s.CreateRecord(ctx, c, RecordInput{Values: values, Manager: tt.manager, Superuser: tt.superuser})
			if err != nil {
				t.Fatalf("CreateRecord: %v", err)
			}
			if r.Fields["role"] != tt.wantCreate || r.Fields["name"] != "N" {
				t.Errorf("created fields = %v, want role %q and name N", r.Fields, tt.wantCreate)
			}
			if values["role"] != "admin" {
				t.Errorf("CreateRecord changed its input: %v", values)
			}
			r, err = s.UpdateRecord(ctx, c, r.ID, RecordInput{Values: map[string]any{"role": "boss"}, Manager: tt.manager, Superuser: tt.superuser})
			if err != nil {
				t.Fatalf("UpdateRecord: %v", err)
			}
			if r.Fields["role"] != tt.want {
				t.Errorf("updated role = %#v, want %#v", r.Fields["role"], tt.want)
			}
			for _, showHidden := range []bool{false, true} {
				pub := r.Public(c, true, showHidden)
				role, shown := pub["role"]
				if shown != showHidden || (shown && role != tt.want) {
					t.Errorf("Public(showHidden %v) = %v, want role shown %v", showHidden, pub, showHidden)
				}
				for _, secret := range []string{"password", "tokenKey"} {
					if _, ok := pub[secret]; ok {
						t.Errorf("Public(showHidden %v) shows %s: %v", showHidden, secret, pub)
					}
				}
			}
		})
	}
}

// TestAccepted: RecordInput.Accepted drops the values of hidden custom
// fields unless the caller is a superuser, keeps the hidden system ones
// (the password is read, tokenKey refused later), and copies rather
// than changes its input.
func TestAccepted(t *testing.T) {
	c := &Collection{Type: "auth", Fields: append(systemAuthFields(),
		Field{Name: "name", Type: FieldText}, Field{Name: "role", Type: FieldText, Hidden: true})}
	sent := map[string]any{"password": "p", "tokenKey": "k", "name": "N", "role": "admin"}
	for _, tt := range []struct {
		name      string
		superuser bool
		values    map[string]any
		want      map[string]any
	}{
		{"guest", false, sent, map[string]any{"password": "p", "tokenKey": "k", "name": "N"}},
		{"superuser", true, sent, sent},
		{"nothing hidden sent", false, map[string]any{"name": "N"}, map[string]any{"name": "N"}},
		{"no values", false, nil, nil},
	} {
		got := RecordInput{Values: tt.values, Superuser: tt.superuser}.Accepted(c)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: Accepted(%v) (-want +got):\n%s", tt.name, tt.values, diff)
		}
	}
	if sent["role"] != "admin" {
		t.Errorf("Accepted changed its input: %v", sent)
	}
}
