#!/usr/bin/env bash
# Build first: CGO_ENABLED=0 go build -o strongbox . ; then run from the repo root: testdata/wrk/auth.sh
# Issue 2 figures against the built binary on loopback.
set -u
B=http://127.0.0.1:18091
D=$(mktemp -d)
env ${PERF_ENV:-} STRONGBOX_SUPERUSER_EMAIL=root@example.com STRONGBOX_SUPERUSER_PASSWORD=root-password-1 ${BIN:-./strongbox} serve --http 127.0.0.1:18091 --dir $D > /tmp/perf-serve.out 2>/tmp/perf-serve.err &
PID=$!
sleep 1.5
curl -s -X POST $B/api/collections/users/records -H 'Content-Type: application/json' -d '{"email":"u@example.com","password":"password123","passwordConfirm":"password123"}' >/dev/null
TOKEN=$(curl -s -X POST $B/api/collections/users/auth-with-password -H 'Content-Type: application/json' -d '{"identity":"u@example.com","password":"password123"}' | python3 -c 'import json,sys;print(json.load(sys.stdin)["token"])')
export TOKEN
if [ -n "${LOGS_OFF:-}" ]; then
  SU=$(curl -s -X POST $B/api/collections/_superusers/auth-with-password -H 'Content-Type: application/json' -d '{"identity":"root@example.com","password":"root-password-1"}' | python3 -c 'import json,sys;print(json.load(sys.stdin)["token"])')
  curl -s -X PATCH $B/api/settings -H "Authorization: $SU" -H 'Content-Type: application/json' -d '{"logs":{"maxDays":0}}' >/dev/null
  echo "(request logging off)"
fi
W=$(cd "$(dirname "$0")" && pwd)
echo "== auth-refresh"
wrk -t2 -c16 -d10s -s $W/post_auth.lua $B/api/collections/users/auth-refresh
echo "== auth-with-password flood (cost 10)"
IDENTITY=u@example.com PASSWORD=password123 wrk -t2 -c16 -d10s -s $W/login.lua $B/api/collections/users/auth-with-password
echo "== /api/health during a login flood"
IDENTITY=u@example.com PASSWORD=password123 wrk -t1 -c16 -d14s -s $W/login.lua $B/api/collections/users/auth-with-password > /tmp/flood.out &
sleep 2
wrk -t1 -c2 -d10s --latency $B/api/health
wait %2 2>/dev/null; sleep 0.5
cat /tmp/flood.out | grep -E 'Requests/sec|Non-2xx'
echo "== RSS"
ps -o rss=,vsz= -p $PID
kill -TERM $PID; wait $PID
rm -rf $D
