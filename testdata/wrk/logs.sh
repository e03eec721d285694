#!/usr/bin/env bash
# Build first: CGO_ENABLED=0 go build -o strongbox . ; then run from the repo root: testdata/wrk/logs.sh
# Issue 4 figures against the built binary on loopback.
set -u
B=http://127.0.0.1:18094
BIN=${BIN:-./strongbox}
W=$(cd "$(dirname "$0")" && pwd)
login() { curl -s -X POST $B/api/collections/_superusers/auth-with-password -H 'Content-Type: application/json' -d '{"identity":"root@example.com","password":"root-password-1"}' | python3 -c 'import json,sys;print(json.load(sys.stdin)["token"])'; }
start() {
  STRONGBOX_SUPERUSER_EMAIL=root@example.com STRONGBOX_SUPERUSER_PASSWORD=root-password-1 $BIN serve --http 127.0.0.1:18094 --dir $1 > /tmp/perf-logs.out 2>/tmp/perf-logs.err &
  PID=$!
  for i in $(seq 1 200); do grep -q listening /tmp/perf-logs.out 2>/dev/null && break; sleep 0.05; done
}
D=$(mktemp -d)
start $D
SU=$(login)
echo "== /api/health with request logging on and off (same run, alternating)"
for i in 1 2 3; do
  curl -s -X PATCH $B/api/settings -H "Authorization: $SU" -H 'Content-Type: application/json' -d '{"logs":{"maxDays":5}}' >/dev/null
  echo -n "on:  "; wrk -t2 -c16 -d10s $B/api/health | grep Requests/sec
  curl -s -X PATCH $B/api/settings -H "Authorization: $SU" -H 'Content-Type: application/json' -d '{"logs":{"maxDays":0}}' >/dev/null
  echo -n "off: "; wrk -t2 -c16 -d10s $B/api/health | grep Requests/sec
done
kill -TERM $PID; wait $PID; rm -rf $D

echo "== 1,000,000 request logs"
D=$(mktemp -d)
$BIN logs seed --n 1000000 --dir $D
du -sh $D/logs
T0=$(date +%s.%N); start $D; T1=$(date +%s.%N)
echo "serve start (open + index 1M logs, first superuser, listen): $(echo "$T1 - $T0" | bc) s"
SU=$(login); export TOKEN=$SU
curl -s "$B/api/logs?perPage=1&skipTotal=1" -H "Authorization: $SU" | head -c 300; echo
echo "-- list filter=(data.status>=400)&sort=-created&perPage=50, 1 connection"
wrk -t1 -c1 -d10s --latency -s $W/get_auth.lua "$B/api/logs?filter=(data.status%3E%3D400)&sort=-created&perPage=50" | grep -E '50%|90%|99%|Requests/sec'
echo "-- stats, 1 connection"
wrk -t1 -c1 -d10s --latency -s $W/get_auth.lua "$B/api/logs/stats" | grep -E '50%|90%|99%|Requests/sec'
echo "-- list, 4 connections"
wrk -t2 -c4 -d10s --latency -s $W/get_auth.lua "$B/api/logs?filter=(data.status%3E%3D400)&sort=-created&perPage=50" | grep -E '50%|90%|99%|Requests/sec'
echo "-- RSS (KiB) with 1M logs"
ps -o rss=,vsz= -p $PID
kill -TERM $PID; wait $PID; rm -rf $D
