#!/usr/bin/env bash
# Issue 24 figures: `strongbox import pocketbase` of a PocketBase v0.31.0
# data dir with 100,000 users and 1,000,000, 100,000 and 0 request logs:
# wall time and peak RSS of each import (so that RSS against the number of
# logs shows), then one imported user signing in with the password all
# users share.
#
#   go build -o /tmp/strongbox . &&
#   STRONGBOX_POCKETBASE=/tmp/pb/base testdata/import/bench.sh /tmp/strongbox
#
# PocketBase runs once on an empty dir to create its schema (and a
# superuser, whose bcrypt hash, cost 10, every user gets: password
# bench-password-1); the rows are then inserted with Debian's sqlite3
# (recursive CTEs: distinct ids, emails and token keys; logs shaped like
# PocketBase's request logs over the last 3 days). USERS and LOGS override
# the counts (LOGS is a list). Needs bash, sqlite3, curl, python3 (a free
# port) and /usr/bin/time.
set -euo pipefail
BIN=$(realpath "${1:?usage: bench.sh STRONGBOX_BINARY}")
PB=${STRONGBOX_POCKETBASE:?set STRONGBOX_POCKETBASE to a PocketBase v0.31.0 executable}
USERS=${USERS:-100000}
LOGS=${LOGS:-"1000000 100000 0"}
PASSWORD=bench-password-1
W=$(mktemp -d "${TMPDIR:-/tmp}/strongbox-import-bench.XXXXXX")
# KEEP=1 keeps the work dir (its path is printed) and the PocketBase dirs.
if [ -n "${KEEP:-}" ]; then echo "work dir: $W"; else trap 'rm -rf "$W"' EXIT; fi
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

echo "== PocketBase schema ($("$PB" --version))"
cd "$W"
"$PB" superuser upsert root@example.com "$PASSWORD" --dir "$W/base" >/dev/null
P=$(port)
"$PB" serve --http "127.0.0.1:$P" --dir "$W/base" >"$W/pb.log" 2>&1 &
PBPID=$!
for _ in $(seq 1 200); do curl -sf "http://127.0.0.1:$P/api/health" >/dev/null && break; sleep 0.05; done
kill -TERM $PBPID
wait $PBPID || true
HASH=$(sqlite3 "$W/base/data.db" "SELECT password FROM _superusers LIMIT 1")

echo "== $USERS users"
T0=$(date +%s.%N)
sqlite3 "$W/base/data.db" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $USERS)
INSERT INTO users (id, email, emailVisibility, verified, password, tokenKey, name, avatar, created, updated)
SELECT printf('u%014d', i), printf('user%d@example.com', i), i % 2, i % 3 = 0, '$HASH',
       lower(hex(randomblob(21))) || printf('%08d', i), 'User ' || i, '',
       strftime('%Y-%m-%d %H:%M:%fZ', 'now', printf('-%d seconds', i)),
       strftime('%Y-%m-%d %H:%M:%fZ', 'now', printf('-%d seconds', i))
FROM n;
COMMIT;
SQL
echo "inserted in $(echo "$(date +%s.%N) - $T0" | bc) s"

# logs N writes N request logs into a copy of the base dir, dir $W/pb_N.
logs() {
  local n=$1 d="$W/pb_$1"
  cp -r "$W/base" "$d"
  [ "$n" -eq 0 ] && return
  sqlite3 "$d/auxiliary.db" <<SQL
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $n),
r(i, method, status, url) AS (
  SELECT i, CASE i % 5 WHEN 0 THEN 'POST' WHEN 1 THEN 'PATCH' ELSE 'GET' END,
         CASE WHEN i % 17 = 0 THEN 404 WHEN i % 23 = 0 THEN 400 WHEN i % 101 = 0 THEN 500 ELSE 200 END,
         CASE i % 4 WHEN 0 THEN '/api/health' WHEN 1 THEN printf('/api/collections/users/records?page=%d', i % 50)
                    WHEN 2 THEN printf('/api/collections/users/records/u%014d', i % $USERS + 1)
                    ELSE '/api/collections/users/auth-with-password' END
  FROM n)
INSERT INTO _logs (id, level, message, data, created)
SELECT printf('l%014d', i), CASE WHEN status >= 400 THEN 8 ELSE 0 END, method || ' ' || url,
       json_patch(json_object('auth', CASE WHEN i % 3 = 0 THEN 'users' ELSE '' END, 'execTime', (i % 997) / 10.0,
                   'method', method, 'referer', '', 'remoteIP', '127.0.0.1', 'status', status, 'type', 'request',
                   'url', url, 'userAgent', 'bench/1.0', 'userIP', printf('10.0.%d.%d', i % 256, i / 256 % 256)),
                  CASE WHEN status >= 400 THEN json_object('error', 'Something went wrong.', 'details', 'bench') ELSE '{}' END),
       strftime('%Y-%m-%d %H:%M:%fZ', 'now', printf('-%.3f seconds', i * 259200.0 / $n))
FROM r;
COMMIT;
SQL
}

for n in $LOGS; do
  echo "== import: $USERS users, $n logs"
  logs "$n"
  du -sh "$W/pb_$n/data.db" "$W/pb_$n/auxiliary.db"
  echo "\$ /usr/bin/time -v strongbox import pocketbase pb_$n --dir sb_$n"
  /usr/bin/time -v "$BIN" import pocketbase "$W/pb_$n" --dir "$W/sb_$n" >"$W/import_$n.out" 2>"$W/time_$n.txt" ||
    { cat "$W/import_$n.out" "$W/time_$n.txt"; exit 1; }
  tail -n 15 "$W/import_$n.out"
  grep -E 'Elapsed \(wall clock\)|Maximum resident set size' "$W/time_$n.txt"
  du -sh "$W/sb_$n"
  [ -n "${KEEP:-}" ] || rm -rf "$W/pb_$n"
done

n=${LOGS%% *}
echo "== sign-in on the import with $n logs: user1@example.com, the shared password"
P=$(port)
"$BIN" serve --http "127.0.0.1:$P" --dir "$W/sb_$n" >"$W/serve.out" 2>"$W/serve.err" &
SBPID=$!
for _ in $(seq 1 400); do curl -sf "http://127.0.0.1:$P/api/health" >/dev/null && break; sleep 0.05; done
curl -s -o "$W/auth.json" -w 'auth-with-password: HTTP %{http_code}\n' -X POST \
  "http://127.0.0.1:$P/api/collections/users/auth-with-password" \
  -H 'Content-Type: application/json' -d "{\"identity\":\"user1@example.com\",\"password\":\"$PASSWORD\"}"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("record", r["record"]["id"], r["record"]["email"])' "$W/auth.json"
kill -TERM $SBPID
wait $SBPID || true
