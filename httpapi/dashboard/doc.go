// Package dashboard serves the admin dashboard: a single-page app of plain
// HTML, CSS and JavaScript modules embedded in the binary (ui/), which
// talks to the server through its public JSON API only. It knows nothing
// of that API: it serves files. Each file is compressed with gzip once, the
// first time any is served, and carries an ETag (a hash of the bytes sent,
// so the gzip form has its own) and Cache-Control: no-cache, so that a
// browser revalidates each file and a second visit costs only 304s.
//
// # Screens
//
// The server's address, then /_/ (/_ redirects there), is the dashboard:
// a single-page app on PocketBase's hash routes (#/login,
// #/auth/confirm-password-reset/TOKEN, …), so bookmarks and mail links
// carry over. It has:
//
//   - sign-in as a superuser (password, then the emailed code when MFA is
//     on for _superusers), sign-out, and the forgotten password
//     (#/request-password-reset, #/confirm-password-reset/TOKEN);
//   - the public pages the account mails link to, no sign-in needed:
//     #/auth/confirm-verification/TOKEN, #/auth/confirm-password-reset/TOKEN
//     and #/auth/confirm-email-change/TOKEN (and PocketBase's #/users/…
//     aliases), for any auth collection, each showing the server's error
//     plainly (an expired or used token);
//   - the request logs (#/logs): a filter box (the filter language; a bare
//     word searches the level, message and data, as PocketBase's box
//     does; a list column's name such as status means data.status; a
//     refused filter shows the server's data.filter, what was expected
//     and at which character, with a caret under the term, and clears the
//     list and the chart), an "Include superuser requests" toggle (off by default), an
//     hourly chart of /api/logs/stats under the same filter (hover or
//     focus a bar for its count; drag over it, or Enter on a bar, to
//     narrow the time range; Reset; one hour is counted by minute, from
//     the range's logs), the list newest first (level, status,
//     method, URL, time, execution time; the server's own events with
//     their message and attributes) with its total and "Load more", a
//     detail panel with every field and data key and "Copy as JSON" (deep
//     link #/logs?logId=ID), and the logs settings (max days, min level,
//     IP, auth id). Over 1,000,000 logs (strongbox logs seed) the chart
//     and the first page show about 140 ms after navigating to #/logs on
//     loopback (headless Chromium; testdata/dashboard/logs.mjs in its
//     timing mode measures it);
//   - backups (#/settings/backups): the archives newest first (name, size,
//     date); create one (optionally named; the button is disabled, saying
//     why, while a backup or restore runs); upload a .zip with a progress
//     bar; download (with a short-lived file token: the superuser's token
//     never goes in a URL); delete after a confirmation; restore after
//     typing the archive's name, then a view that waits (up to 3 minutes)
//     for the restarted server and reloads, and says the restore is done;
//     a refused name shows the allowed pattern, a refused upload the
//     server's data.file message (and no progress bar); and the automatic backups'
//     schedule (off, daily, every 6 hours, weekly or any cron expression),
//     how many to keep, and the S3 bucket (the secret is write-only) with
//     "Test connection";
//   - settings (#/settings): the application's name and URL, the trusted
//     proxy headers (and leftmost or rightmost IP), and the rate limits (on
//     or off; add, edit or remove rules: label, audience, max requests per
//     seconds); mail (#/settings/mail): the sender, the SMTP server (the
//     password is write-only: left empty, the stored one is kept) and "Send
//     test email" with a choice of template (with SMTP off it says the
//     mail was not sent but written to the outbox, naming the file the
//     server gives in Strongbox-Outbox-File). Field errors show next to
//     their field; every date shows as the API writes it (UTC), the local
//     time on hover (dates.js), and a form's banner is cleared when the
//     form changes or the next action starts (dom.notice);
//   - the auth collections' records (#/collections): pick a collection,
//     then its records with a filter, a sort and pages; create, edit (other
//     fields as text), delete after a confirmation; send a verification or
//     a password reset mail; impersonate for a duration and copy the token;
//     the linked OAuth2 accounts, each with Unlink. Its options: the API
//     rules (the filter language, or superusers only), password auth and
//     identity fields, OTP, MFA and its rule, the new-login alert, token
//     durations, the mail templates, and OAuth2 (providers with client id,
//     a write-only secret, display name, auth/token/user info URLs and a
//     PKCE switch; mapped fields); create, rename and delete an auth
//     collection. Other collection types are not listed (strongbox stores
//     none; use the JSON API for any an older data dir holds).
//
// # Safety
//
// No framework, no build step, nothing loaded from elsewhere, so it works
// offline and air-gapped. It keeps the superuser's token in localStorage
// under pocketbase_auth, as PocketBase's dashboard does. Every answer under
// /_/ carries the Content-Security-Policy [CSP], X-Content-Type-Options:
// nosniff and Referrer-Policy: no-referrer; data is always shown as text,
// never as HTML. The sign-in screen loads at most every file of the app:
// 37,007 bytes compressed for all 17 (the budget is 200 KB;
// TestLoginPageWeight prints the figure). A path under /_/ that is no file
// of it is the JSON 404 ([ErrNotFound]). As in PocketBase, a file served
// is not written to the request log (an error is).
//
// # Tests
//
// The JavaScript modules' unit tests (ui/*.test.mjs) run under Node
// (TestUnitJS). The browser tests of package main drive the dashboard in
// headless Chromium through puppeteer-core, each with a script in
// testdata/dashboard/:
//
//   - TestDashboardBrowser (journey.mjs): sign in and out, the
//     password-reset, verification and email-change links of real mails, a
//     used and a malformed token, no console error; screenshots in
//     $STRONGBOX_ARTIFACTS.
//   - TestDashboardLogsBrowser (logs.mjs): the chart's hourly totals equal
//     GET /api/logs/stats, a bare word narrows the list and the chart, the
//     detail panel, a hostile URL shown as text, the deep link.
//   - TestDashboardBackupsBrowser (backups.mjs), against a child server
//     process (a restore re-executes it): create, download (the bytes
//     compared with the API's), upload with the progress bar, the
//     settings, delete, and a restore that brings back the data as at the
//     backup.
//   - TestDashboardSettingsBrowser (settings.mjs): the settings screens'
//     fields, an invalid URL's error, and SMTP pointed at an SMTP sink that
//     requires the password, then a test email sent to it.
//   - TestDashboardCollectionsBrowser (collections.mjs): creates, lists,
//     filters to, edits and deletes a user, checks that an impersonation
//     token it copies is accepted, unlinks an OAuth2 account (linked
//     through a loopback provider), saves a rule, options and an OAuth2
//     provider of users (its URLs and PKCE too), and creates, renames and
//     deletes a collection.
//   - TestDashboardMFABrowser (mfa.mjs): signs in with MFA (the password,
//     then the code from the mail), switches OTP on for users and signs a
//     user in with a mailed OTP, and checks that the Collections screen
//     does not scroll sideways at 360 px.
//
// .ci/run installs Debian's chromium and puppeteer-core; without them
// these tests are skipped:
//
//	npm install --prefix /tmp/pptr puppeteer-core@24.43.1
//	STRONGBOX_CHROMIUM=/usr/bin/chromium STRONGBOX_PUPPETEER=/tmp/pptr/node_modules/puppeteer-core go test -run TestDashboard -v .
package dashboard
