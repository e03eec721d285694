package conformance

import (
	"net/http"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A mutator proves checks able to fail against the real strongbox: a
// mutation in front of it (strongbox_test.go) breaks exactly what the
// checks named in fails verify, which must then FAIL. Violations that need
// server state strongbox cannot be made to show stay bugs of the fake
// (violations_test.go).
type mutator struct {
	bug   string
	fails []string
	m     mutation
}

// mutators are every mutator, grouped by the files of the checks.
func mutators() []mutator {
	return slices.Concat(errorsMutators, authMutators, tokensMutators, recordsMutators, flowsMutators,
		logsMutators, backupsMutators, rateLimitsMutators, hostileMutators, rulesMutators, hiddenMutators, totpMutators, passkeyMutators, []mutator{
			{"other-readings", twinsOf(func(id string) bool { return !fakeServes(id) }), otherReadings},
		})
}

// twinsOf returns the IDs of the pocketbase twins of the stricterReadings
// of the requirements pred selects.
func twinsOf(pred func(id string) bool) []string {
	var ids []string
	for _, sr := range stricterReadings {
		if pred(sr.of) {
			ids = append(ids, twinID(sr.of))
		}
	}
	return ids
}

// fakeServes reports whether the fake serves what a requirement checks:
// all but the logs, the backups, the rate limits, the login throttle, the
// answers to hostile clients, the body limits, issue 19's API rules,
// auth system records, refusals of dropped input and of base collections,
// issue 20's new-login alert, issue 29's hidden fields and issue 34's
// authenticator apps and passkeys, and issue 33's continuous backup,
// which only the real strongbox serves.
func fakeServes(id string) bool {
	for _, p := range []string{"LOG-", "BKP-", "RATE-", "LOGIN-THROTTLE-", "HTTP-PATH-", "HTTP-RAW-", "HTTP-LIMIT-",
		"RULE-", "SYSREC-", "NODROP-", "COLL-BASE-", "AUTH-ALERT-", "HIDDEN-", "TOTP-", "PSK-", "STREAM-"} {
		if strings.HasPrefix(id, p) {
			return false
		}
	}
	return true
}

// TestMutatorsCatchViolations runs, for each mutator, the requirements it
// names against a strongbox of its own behind the mutation, under the
// strongbox profile, and requires each to FAIL with a structured expected
// and actual. A fresh strongbox per mutator (it starts in a few
// milliseconds) keeps settings, rate-limit windows and backups from
// leaking between them.
func TestMutatorsCatchViolations(t *testing.T) {
	if testing.Short() {
		t.Skip("runs parts of the suite many times")
	}
	t.Parallel()
	ms := slowFirst(t, mutators())
	pending := loadPendingStrongbox(t)
	runConcurrently(t, len(ms), func(i int) string { return ms[i].bug }, func(t *testing.T, i int) {
		mu := ms[i]
		fails := slices.DeleteFunc(slices.Clone(mu.fails), func(id string) bool { return pending[id] != "" })
		if len(fails) == 0 {
			t.Skipf("every requirement it names is pending in strongbox (%s)", pendingStrongboxFile)
		}
		base := startFront(t, startStrongbox(t), mu.m)
		expectFailures(t, mu.bug, fails, Config{BaseURL: base, Email: testEmail, Password: testPassword,
			Profile: SourceStrongbox, Destructive: true, RestartTimeout: time.Second, WaitTimeout: mutatorWait})
	})
}

// slowMutators are the mutators whose runs wait out a timeout
// (mutatorWait, for each check they break), the login throttle's
// spacing (several seconds) or a mail limit's window while the others take half a second:
// TestMutatorsCatchViolations starts them first, so that they do not
// start last and add their wait to its time.
var slowMutators = []string{"refuse-concurrent-logins", "events-not-stored", "lock-identity-after-20",
	"auth-alert-device-ignored", "audit-anonymous", "events-as-info", "no-mail-limit"}

// slowFirst returns ms with the slowMutators first, the others in their
// order. Each of slowMutators must be a mutator.
func slowFirst(t *testing.T, ms []mutator) []mutator {
	t.Helper()
	rank := func(m mutator) int {
		if i := slices.Index(slowMutators, m.bug); i >= 0 {
			return i
		}
		return len(slowMutators)
	}
	for _, bug := range slowMutators {
		if !slices.ContainsFunc(ms, func(m mutator) bool { return m.bug == bug }) {
			t.Fatalf("slowMutators names %q, which is no mutator", bug)
		}
	}
	return slices.SortedStableFunc(slices.Values(ms), func(a, b mutator) int { return rank(a) - rank(b) })
}

// mutatorWait is the WaitTimeout of the mutators' runs. A mutation that
// hides a log entry or a mail makes its checks wait it out, and the real
// strongbox logs and mails within milliseconds: 3 s instead of the 10 s
// default leaves it ample time, and keeps TestMutatorsCatchViolations
// from waiting 10 s for each check a hiding mutation breaks.
const mutatorWait = 3 * time.Second

// concurrentRuns bounds the subtests runConcurrently runs at once. The runs
// mostly wait (for a server to log, for a restart that does not come), so
// they overlap well beyond the CPUs that bound t.Parallel.
const concurrentRuns = 16

// runConcurrently runs n subtests, named by name, concurrentRuns at a
// time: each t.Run is called from a goroutine of its own (which
// t.Parallel's limit of -test.parallel does not bound).
func runConcurrently(t *testing.T, n int, name func(i int) string, run func(t *testing.T, i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, concurrentRuns)
	for i := range n {
		// Taken here, a place makes the subtests start in order, so that
		// the slow ones listed first start first.
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(name(i), func(t *testing.T) { run(t, i) })
		}()
	}
	wg.Wait()
}

// expectFailures runs the requirements ids under cfg and requires each to
// FAIL with a structured expected and actual.
func expectFailures(t *testing.T, bug string, ids []string, cfg Config) {
	t.Helper()
	var reqs []*Requirement
	for _, r := range Requirements {
		if slices.Contains(ids, r.ID) {
			reqs = append(reqs, r)
		}
	}
	if len(reqs) != len(ids) {
		t.Fatalf("bug %q names %d requirements, %d of which exist", bug, len(ids), len(reqs))
	}
	rep := runRequirements(t.Context(), cfg, reqs)
	var passed []string
	for _, res := range rep.Results {
		switch res.Outcome {
		case Fail:
			t.Logf("%s: %s", res.Req.ID, res.Detail)
			if res.Expected == "" || res.Actual == "" {
				t.Errorf("%s: a failure without a structured expected and actual (report it with Mismatch): %s",
					res.Req.ID, res.Detail)
			}
		case Pass:
			passed = append(passed, res.Req.ID)
		default:
			t.Errorf("%s: %v with bug %q, want FAIL (detail %q)", res.Req.ID, res.Outcome, bug, res.Detail)
		}
	}
	if len(passed) > 0 {
		sort.Strings(passed)
		t.Errorf("with bug %q these checks still pass: %s", bug, strings.Join(slices.Compact(passed), " "))
	}
}

// reExcerpt finds an :excerpt in a fields parameter.
var reExcerpt = regexp.MustCompile(`(\w+):excerpt\((\d+)(?:,\s*(true|false))?\)`)

// otherReadings takes, on the logs and backups routes, the other choices
// the document leaves open (see stricterReadings): log ids of another form,
// excerpts cut without trimming and ended with "…", no totalPages, stats
// dates without a Z, the backups newest first, 200 with null for 204,
// codes and messages of its own where §7 names none, a download served
// as application/octet-stream with no Content-Disposition. Only the
// pocketbase twins must fail.
func otherReadings(x *front, w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, "/api/logs") && !strings.HasPrefix(r.URL.Path, "/api/backups") {
		x.pass(w, r)
		return
	}
	r.URL.Path = strings.Replace(r.URL.Path, "/api/logs/log-", "/api/logs/", 1)
	q := r.URL.Query()
	q.Set("filter", strings.ReplaceAll(q.Get("filter"), `"log-`, `"`))
	cut := reExcerpt.FindStringSubmatch(q.Get("fields"))
	q.Set("fields", reExcerpt.ReplaceAllString(q.Get("fields"), "$1"))
	for _, k := range []string{"filter", "fields"} {
		if q.Get(k) == "" {
			q.Del(k)
		}
	}
	r.URL.RawQuery = q.Encode()
	res := x.forward(r)
	switch {
	case logsList(r) || logsView(r):
		eachEntry(r, res, func(e map[string]any) {
			if id, ok := e["id"].(string); ok {
				e["id"] = "log-" + id
			}
			if s, ok := e[cutField(cut)].(string); ok {
				e[cut[1]] = plainExcerpt(s, cut)
			}
		})
		if m := res.object(); logsList(r) && m != nil {
			delete(m, "totalPages")
			res.setJSON(m)
		}
	case logsStats(r):
		statsDates(res, func(d string) string { return strings.TrimSuffix(d, "Z") })
	case bkList(r):
		if list, ok := res.json().([]any); ok {
			slices.Reverse(list)
			res.setJSON(list)
		}
	case bkDownload(r) && res.status == 200:
		res.header.Set("Content-Type", "application/octet-stream")
		res.header.Del("Content-Disposition")
	case res.status == 204:
		*res = answered{status: 200, header: http.Header{"Content-Type": {"application/json"}}, body: []byte("null")}
	case res.status >= 400:
		if m := res.object(); m != nil {
			if !documentMessages[m["message"].(string)] {
				m["message"] = fakeOwnMessage
			}
			data, _ := m["data"].(map[string]any)
			m["data"] = fakeOwnCodes(data)
			res.setJSON(m)
		}
	}
	res.write(w)
}

// cutField is the field an :excerpt cuts ("" for none).
func cutField(cut []string) string {
	if cut == nil {
		return ""
	}
	return cut[1]
}

// plainExcerpt cuts s to the runes the :excerpt names, untrimmed, and
// ends it with "…" if asked.
func plainExcerpt(s string, cut []string) string {
	n, _ := strconv.Atoi(cut[2])
	if len([]rune(s)) <= n {
		return s
	}
	s = string([]rune(s)[:n])
	if cut[3] == "true" {
		s += "…"
	}
	return s
}
