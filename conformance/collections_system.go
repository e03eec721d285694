package conformance

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// The guarantees of system collections. The interface document is silent
// on collection and record updates (§1: contract not shown; §7: validation
// codes not shown), so these follow PocketBase v0.31.0: its collection
// validator refuses a changed name, type or API rule of a system
// collection (core/collection_validate.go), a token duration outside
// 10..94670856 seconds (core/collection_model_auth_options.go) and a
// changed record id (core/field_text.go), and _superusers keeps its rules,
// its password auth and no OAuth2.
// The collection messages are not checked, only status and codes.

const sectionSystem = "issue 8 (system collections; the document is silent, so PocketBase v0.31.0: " +
	"core/collection_validate.go, core/field_text.go; its auth collection options and token durations)"

const (
	codeSystemRule   = "validation_collection_system_rule_change"
	codeSystemName   = "validation_collection_system_name_change"
	codeTypeChange   = "validation_collection_type_change"
	codeMaxLessEqual = "validation_max_less_equal_than_required"
	codePKChange     = "validation_pk_change"
	maxTokenDuration = 94670856
)

var tokenConfigKeys = []string{"authToken", "passwordResetToken", "emailChangeToken", "verificationToken", "fileToken"}

var systemCollectionRequirements = []*Requirement{
	{
		ID:      "COLL-SYS-001",
		Source:  SourcePocketBase,
		Section: sectionSystem,
		Name:    "_superusers API rules cannot change",
		Text: "PATCH /api/collections/_superusers as superuser setting any of listRule, viewRule, createRule, " +
			"updateRule or deleteRule to a value other than its current one answers 400 with data.<rule>.code \"" +
			codeSystemRule + "\"; the next GET reports the rule unchanged.",
		Run: func(ctx context.Context, c *Client) error {
			for _, rule := range []string{"listRule", "viewRule", "createRule", "updateRule", "deleteRule"} {
				if err := expectRefusedChange(ctx, c, "_superusers", rule, "", codeSystemRule, rule); err != nil {
					return err
				}
			}
			return nil
		},
	},
	{
		ID:      "COLL-SYS-002",
		Source:  SourcePocketBase,
		Section: sectionSystem + "; §5.4",
		Name:    "guests stay out of _superusers",
		Text: "After PATCH /api/collections/_superusers {\"createRule\":\"\",\"listRule\":\"\"} is refused with 400, a guest " +
			"POST /api/collections/_superusers/records with a valid email and password answers 403 \"" + msgOnlySuperusers +
			"\" and creates no superuser, and a guest GET of its records answers 403 \"" + msgOnlySuperusers + "\".",
		Run: checkGuestsStayOut,
	},
	{
		ID:      "COLL-SYS-003",
		Source:  SourcePocketBase,
		Section: sectionSystem,
		Name:    "_superusers name and type cannot change",
		Text: "PATCH /api/collections/_superusers as superuser with a new name answers 400 with data.name.code \"" +
			codeSystemName + "\", and with type \"base\" answers 400 with data.type.code \"" + codeTypeChange +
			"\"; the collection keeps its name and type.",
		Run: func(ctx context.Context, c *Client) error {
			if err := expectRefusedChange(ctx, c, "_superusers", "name", "cf_"+newNonce(8), codeSystemName, "name"); err != nil {
				return err
			}
			return expectRefusedChange(ctx, c, "_superusers", "type", "base", codeTypeChange, "type")
		},
	},
	{
		ID:      "COLL-SYS-004",
		Source:  SourcePocketBase,
		Section: sectionSystem + "; §5.9",
		Name:    "_superusers token durations stay in range",
		Text: "PATCH /api/collections/_superusers with authToken.duration 0 answers 400 with data.authToken.duration.code \"" +
			codeRequired + "\", with 9 \"" + codeMinGreaterThan + "\", with " + fmt.Sprint(maxTokenDuration+1) + " \"" +
			codeMaxLessEqual + "\"; the duration is unchanged and a new superuser login token carries a future exp.",
		Run: checkSuperuserDurations,
	},
	{
		ID:      "COLL-SYS-005",
		Source:  SourcePocketBase,
		Section: sectionSystem,
		Name:    "every token duration is validated",
		Text: "On a new auth collection, PATCH with <token>.duration 5 for each of authToken, passwordResetToken, " +
			"emailChangeToken, verificationToken and fileToken answers 400 with data.<token>.duration.code \"" +
			codeMinGreaterThan + "\", and with 3600 answers 200 and the next GET reports 3600.",
		Run: checkCollectionDurations,
	},
	{
		ID:      "COLL-SYS-006",
		Source:  SourcePocketBase,
		Section: sectionSystem + "; §5.4",
		Name:    "OAuth2 never enabled on _superusers",
		Text: "PATCH /api/collections/_superusers {\"oauth2\":{\"enabled\":true}} answers 400 (strongbox refuses it) or " +
			"200 (PocketBase turns it off again on save); either way the next GET reports oauth2.enabled false. The same " +
			"holds for passwordAuth.enabled false: passwordAuth stays enabled.",
		Run: checkSuperusersInvariants,
	},
	{
		ID:      "REC-PK-001",
		Source:  SourcePocketBase,
		Section: sectionSystem,
		Name:    "a record id cannot change",
		Text: "PATCH /api/collections/users/records/{id} as superuser with another valid id answers 400 with " +
			"data.id.code \"" + codePKChange + "\"; the record is still found under its id (200).",
		Run: checkRecordPKChange,
	},
}

// getCollectionJSON returns the collection as a superuser's GET reports it.
func getCollectionJSON(ctx context.Context, c *Client, name string) (map[string]any, error) {
	r, err := c.get(ctx, "/api/collections/"+seg(name), c.su)
	if err != nil {
		return nil, err
	}
	return okObject(r)
}

// patchRefused sends body to collection name and requires 400 with code at
// data.path. A change that was applied anyway is put back by a cleanup.
func patchRefused(ctx context.Context, c *Client, name string, body, restore map[string]any, code string, path ...string) error {
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/"+seg(name), c.su, body)
	if err != nil {
		return err
	}
	if r.status == http.StatusOK {
		c.Cleanup("restore collection "+name, func(ctx context.Context) error {
			return c.patchCollection(ctx, name, restore)
		})
	}
	env, err := expectError(r, http.StatusBadRequest, "")
	if err != nil {
		return fmt.Errorf("PATCH %s %s: %w", name, jsonText(body), err)
	}
	v := any(env.data)
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	m, _ := v.(map[string]any)
	if got, _ := getString(m, "code"); got != code {
		return fmt.Errorf("PATCH %s %s: %w", name, jsonText(body), Mismatch(fmt.Sprintf("data.%s.code %q", joinPath(path), code), r.String()))
	}
	return nil
}

func joinPath(path []string) string { return strings.Join(path, ".") }

// expectRefusedChange sets the top-level key of collection name to v (or,
// when v equals the current value, to a different one), requires 400 with
// code at data.key, and requires the next GET to report the old value.
func expectRefusedChange(ctx context.Context, c *Client, name, key string, v any, code string, path ...string) error {
	before, err := getCollectionJSON(ctx, c, name)
	if err != nil {
		return err
	}
	old := before[key]
	if jsonText(old) == jsonText(v) {
		v = "id != ''"
	}
	if err := patchRefused(ctx, c, name, map[string]any{key: v}, map[string]any{key: old}, code, path...); err != nil {
		return err
	}
	after, err := getCollectionJSON(ctx, c, name)
	if err != nil {
		return err
	}
	if jsonText(after[key]) != jsonText(old) {
		return fmt.Errorf("after the refused PATCH of %s.%s, GET: %w", name, key, Mismatch(jsonText(old), jsonText(after[key])))
	}
	return nil
}

func checkGuestsStayOut(ctx context.Context, c *Client) error {
	before, err := getCollectionJSON(ctx, c, "_superusers")
	if err != nil {
		return err
	}
	body := map[string]any{"createRule": "", "listRule": ""}
	restore := map[string]any{"createRule": before["createRule"], "listRule": before["listRule"]}
	r, err := c.patchSuperusers(ctx, body, "rules", restore)
	if err != nil {
		return err
	}
	if err := expectStatus(r, http.StatusBadRequest); err != nil {
		return fmt.Errorf("PATCH _superusers %s: %w", jsonText(body), err)
	}
	email, password := newEmail(), "Cf-"+newNonce(16)
	r, err = c.post(ctx, "/api/collections/_superusers/records", "", map[string]any{
		"email": email, "password": password, "passwordConfirm": password,
	})
	if err != nil {
		return err
	}
	if r.status == http.StatusOK {
		c.cleanupSuperuser(r)
	}
	if _, err := expectError(r, http.StatusForbidden, msgOnlySuperusers); err != nil {
		return fmt.Errorf("guest POST _superusers/records: %w", err)
	}
	r, err = c.get(ctx, "/api/collections/_superusers/records", "")
	if err != nil {
		return err
	}
	if _, err := expectError(r, http.StatusForbidden, msgOnlySuperusers); err != nil {
		return fmt.Errorf("guest GET _superusers/records: %w", err)
	}
	return nil
}

// cleanupSuperuser deletes the superuser a wrongly accepted create made.
func (c *Client) cleanupSuperuser(r *response) {
	m, err := object(r)
	if err != nil {
		return
	}
	id, _ := getString(m, "id")
	c.Cleanup("delete superuser "+id, func(ctx context.Context) error {
		_, err := c.do(ctx, http.MethodDelete, "/api/collections/_superusers/records/"+seg(id), c.su, nil)
		return err
	})
}

func checkSuperuserDurations(ctx context.Context, c *Client) error {
	before, err := getCollectionJSON(ctx, c, "_superusers")
	if err != nil {
		return err
	}
	restore := map[string]any{"authToken": before["authToken"]}
	for _, tc := range []struct {
		d    int64
		code string
	}{{0, codeRequired}, {9, codeMinGreaterThan}, {maxTokenDuration + 1, codeMaxLessEqual}} {
		body := map[string]any{"authToken": map[string]any{"duration": tc.d}}
		if err := patchRefused(ctx, c, "_superusers", body, restore, tc.code, "authToken", "duration"); err != nil {
			return err
		}
	}
	after, err := getCollectionJSON(ctx, c, "_superusers")
	if err != nil {
		return err
	}
	if jsonText(after["authToken"]) != jsonText(before["authToken"]) {
		return fmt.Errorf("authToken after refused PATCHes: %w", Mismatch(jsonText(before["authToken"]), jsonText(after["authToken"])))
	}
	res, err := c.login(ctx, "_superusers", c.email, c.password)
	if err != nil {
		return err
	}
	_, claims, err := splitJWT(res.token)
	if err != nil {
		return Mismatch("the superuser token to be a JWT", err.Error())
	}
	if exp, ok := getNumber(claims, "exp"); !ok || exp <= float64(time.Now().Unix()) {
		return Mismatch("a future exp claim in a new superuser token", fmt.Sprintf("claims %s", jsonText(claims)))
	}
	return nil
}

func checkCollectionDurations(ctx context.Context, c *Client) error {
	name, err := c.newCollection(ctx, "auth")
	if err != nil {
		return err
	}
	for _, key := range tokenConfigKeys {
		body := map[string]any{key: map[string]any{"duration": 5}}
		if err := patchRefused(ctx, c, name, body, map[string]any{}, codeMinGreaterThan, key, "duration"); err != nil {
			return err
		}
		if err := c.patchCollection(ctx, name, map[string]any{key: map[string]any{"duration": 3600}}); err != nil {
			return Mismatch(fmt.Sprintf("200 to PATCH %s.duration 3600", key), err.Error())
		}
		after, err := getCollectionJSON(ctx, c, name)
		if err != nil {
			return err
		}
		tc, _ := getObject(after, key)
		if d, _ := getNumber(tc, "duration"); d != 3600 {
			return fmt.Errorf("after PATCH %s.duration 3600, GET: %w", key, Mismatch(`{"duration":3600}`, jsonText(after[key])))
		}
	}
	return nil
}

// patchSuperusers sends PATCH /api/collections/_superusers with body as
// superuser and, if the server accepts it (200), registers the cleanup that
// patches restore back ("restore _superusers <what>").
func (c *Client) patchSuperusers(ctx context.Context, body map[string]any, what string, restore map[string]any) (*response, error) {
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/_superusers", c.su, body)
	if err != nil {
		return nil, err
	}
	if r.status == http.StatusOK {
		c.Cleanup("restore _superusers "+what, func(ctx context.Context) error {
			return c.patchCollection(ctx, "_superusers", restore)
		})
	}
	return r, nil
}

func checkSuperusersInvariants(ctx context.Context, c *Client) error {
	for _, tc := range []struct {
		key, option string
		set, want   bool
	}{{"oauth2", "enabled", true, false}, {"passwordAuth", "enabled", false, true}} {
		body := map[string]any{tc.key: map[string]any{tc.option: tc.set}}
		r, err := c.patchSuperusers(ctx, body, tc.key, map[string]any{tc.key: map[string]any{tc.option: tc.want}})
		if err != nil {
			return err
		}
		if r.status != http.StatusOK {
			if err := expectStatus(r, http.StatusBadRequest); err != nil {
				return fmt.Errorf("PATCH _superusers %s: %w", jsonText(body), err)
			}
		}
		after, err := getCollectionJSON(ctx, c, "_superusers")
		if err != nil {
			return err
		}
		o, _ := getObject(after, tc.key)
		if got, ok := getBool(o, tc.option); !ok || got != tc.want {
			return fmt.Errorf("after PATCH _superusers %s (answered %d), GET: %w", jsonText(body), r.status,
				Mismatch(fmt.Sprintf("%s.%s = %v", tc.key, tc.option, tc.want), fmt.Sprintf("%s.%s = %v", tc.key, tc.option, o[tc.option])))
		}
	}
	return nil
}

func checkRecordPKChange(ctx context.Context, c *Client) error {
	u, err := c.newUser(ctx)
	if err != nil {
		return err
	}
	newID := newNonce(15)
	r, err := c.do(ctx, http.MethodPatch, "/api/collections/users/records/"+seg(u.id), c.su, map[string]any{"id": newID})
	if err != nil {
		return err
	}
	if r.status == http.StatusOK {
		moved := &user{id: newID}
		c.Cleanup("delete user "+newID, func(ctx context.Context) error { return c.deleteUser(ctx, moved) })
	}
	env, err := expectError(r, http.StatusBadRequest, "")
	if err != nil {
		return err
	}
	if err := expectFieldCodes(r, env, codePKChange, "id"); err != nil {
		return err
	}
	r, err = c.get(ctx, "/api/collections/users/records/"+seg(u.id), c.su)
	if err != nil {
		return err
	}
	return expectStatus(r, http.StatusOK)
}
