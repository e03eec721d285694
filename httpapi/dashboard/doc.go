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
//   - sign-in as a superuser (password, then, when a second factor is
//     asked: the authenticator app's code or a recovery code when
//     _superusers has totp on, with "Email me a code instead" when it has
//     OTP too, else the emailed code; or "Sign in with a passkey",
//     usernameless, shown when the browser has the WebAuthn JSON parsers;
//     a superuser whose MFA asks for a second method is told to use the
//     password), sign-out, and the forgotten password
//     (#/request-password-reset, #/confirm-password-reset/TOKEN);
//   - the superuser's own passkeys (#/passkeys, ui/passkey.js): listed
//     (name, added, last used) with Remove, and "Add a passkey" with a
//     name; the browser's ceremonies read the server's options with
//     PublicKeyCredential.parseCreationOptionsFromJSON and
//     parseRequestOptionsFromJSON and send back the credential's toJSON();
//     it says when passkeys are off for _superusers;
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
//     form changes or the next action starts (dom.notice); security
//     (#/settings/security): the superuser's own authenticator app: set up
//     (the otpauth URI as a QR code drawn by qr.js, a hand-written encoder:
//     byte mode, level M, versions 1 to 10; the key as text), confirmed
//     by a code, the ten recovery codes shown once, or turned off with a
//     code or a recovery code;
//   - the auth collections (#/collections), in PocketBase's shape: the
//     collections in a sidebar (searchable; a new one is created there, the
//     name then cleared and the creation said), the chosen one's records as
//     the main table (the filter box; sortable columns; pages; a check box
//     per row and "Delete selected" after a confirmation within the page;
//     copy an id), #/collections?collection=NAME choosing one (the hash
//     follows the choice, so a reload keeps it). A record opens in a side
//     panel: edit (other fields as text, bool fields as a box), delete
//     after a confirmation, send a verification or a password reset mail,
//     impersonate for a duration and copy the token, the linked OAuth2
//     accounts, each with Unlink. The collection's settings open in a side
//     panel: rename, then tabs. Fields: the built-in fields shown as they
//     are; the collection's own fields added (text, number, bool, email or
//     URL, the types strongbox stores), renamed, reordered and removed, with
//     required, hidden, presentable, min/max, pattern (text) and integers
//     only (number), saved as the whole list (PATCH fields, as PocketBase's
//     dashboard does; a field of another type is sent back unchanged), a
//     field's error on its row. API rules: each rule's state in words
//     (locked: superusers only; public; a filter), one button to lock or
//     unlock it (unlocking keeps the text; locking text asks first, within
//     the page), completions while typing, "Show available fields", and
//     the server's message beside a rule it refuses. Options, a form per
//     section saving only its keys: password auth and identity fields,
//     OTP, passkeys, MFA and its rule, OAuth2 (the redirect URL to
//     register, under meta.appURL when set, with a copy button; providers
//     added from a searchable picker of the server's 32 presets
//     (ui/providers.js), each with only its fields: client id, a
//     write-only secret, the URLs only for oidc, oidc2, oidc3 and mailcow
//     or a stored override, the id_token's JWKS URL and issuers for the
//     OIDC ones, display name and PKCE; the server's errors beside their
//     fields and, by provider, in the banner; mapped fields), the new-login alert, token durations,
//     the mail templates; then deleting the collection after typing its
//     name. Labels are words ("List/Search rule", "Auth token duration"),
//     the API's name beside them. Escape or Close closes a panel and the
//     focus goes back to what opened it; at 390 px the sidebar stacks
//     above the records and a panel takes the whole width. Other
//     collection types are not listed (strongbox stores none; use the
//     JSON API for any an older data dir holds).
//
// # Safety
//
// No framework, no build step, nothing loaded from elsewhere, so it works
// offline and air-gapped. It keeps the superuser's token in localStorage
// under pocketbase_auth, as PocketBase's dashboard does. Every answer under
// /_/ carries the Content-Security-Policy [CSP], X-Content-Type-Options:
// nosniff and Referrer-Policy: no-referrer; data is always shown as text,
// never as HTML. The sign-in screen loads at most every file of the app:
// 73,321 bytes compressed for all 29 (the budget is 200 KB;
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
//   - TestDashboardTOTPBrowser (totp.mjs): TOTP turned on for
//     _superusers in its options, the superuser's enrolment in
//     #/settings/security (Escape cancels a setup and gives the focus
//     back; a wrong code is refused; ten recovery codes), then a sign-in
//     with the password and a code the script computes from the key
//     shown; with STRONGBOX_ZBARIMG, zbarimg decodes the QR code drawn
//     to the otpauth URI.
//   - TestDashboardSettingsBrowser (settings.mjs): the settings screens'
//     fields, an invalid URL's error, and SMTP pointed at an SMTP sink that
//     requires the password, then a test email sent to it.
//   - TestDashboardCollectionsBrowser (collections.mjs): the sidebar
//     search and the deep link (a reload keeps the collection); creates,
//     lists, filters to, edits (in its side panel) and deletes a user,
//     sorts by a column both ways, deletes three users selected together,
//     checks that an impersonation token it copies is accepted, unlinks an
//     OAuth2 account (linked through a loopback provider); adds a field to
//     users (a bad name refused on its row first), moves it and reads it
//     back from the API; a refused rule's message beside it; locks and
//     unlocks a rule with text (kept) and saves it; saves options and an
//     OAuth2 provider of users (its URLs and PKCE too); creates, renames
//     and deletes a collection; Escape closes the panels and the focus
//     returns; each screen shot at 1280x900 and 390x844, none scrolling
//     sideways at 390 px.
//   - TestDashboardMFABrowser (mfa.mjs): signs in with MFA (the password,
//     then the code from the mail), switches OTP on for users and signs a
//     user in with a mailed OTP, and checks that the Collections screen
//     does not scroll sideways at 360 px.
//   - TestDashboardPasskeyBrowser (passkey.mjs): with Chromium's virtual
//     authenticator (DevTools WebAuthn, ctap2, internal, resident keys,
//     user verification) on the page's own origin http://localhost:PORT
//     (meta.appURL): turns passkeys on for _superusers in the options,
//     registers a passkey on #/passkeys, signs out and in with it
//     usernameless; the server refuses a tampered signature, a replayed
//     challenge and an assertion after the app URL moved to another port
//     (wrong origin); screenshots at 1280x900 and 390x844, none scrolling
//     sideways; the server lists the passkey, used, and logged the events.
//   - TestDashboardOAuth2Browser (oauth2.mjs): the redirect URL under the
//     application URL, copied; GitHub added from the picker and saved; an
//     OIDC auth URL the server refuses shows its message beside the field
//     and in the banner; no sideways scroll at 390 px. (Without a browser,
//     TestDashboardProviderPresets checks that ui/providers.js has the
//     server's names, display names and PKCE defaults.)
//
// .ci/run installs Debian's chromium and puppeteer-core; without them
// these tests are skipped:
//
//	npm install --prefix /tmp/pptr puppeteer-core@24.43.1
//	STRONGBOX_CHROMIUM=/usr/bin/chromium STRONGBOX_PUPPETEER=/tmp/pptr/node_modules/puppeteer-core go test -run TestDashboard -v .
package dashboard
