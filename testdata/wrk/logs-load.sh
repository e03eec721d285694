#!/bin/sh
# logs-load.sh measures the request-log store of a built strongbox binary at
# scale (issue 21): startup time, resident memory under load, and the cost
# of request logging. Run from anywhere:
#
#	go build -o /tmp/strongbox . && testdata/wrk/logs-load.sh /tmp/strongbox 1000000
#
# It seeds N synthetic request logs once (`strongbox logs seed`, cached in
# $ROOT/seed-N; ROOT defaults to $TMPDIR/strongbox-logs-load), copies them
# to a fresh data dir, serves it, and prints:
#   startup   time from exec until GET /api/health answers, and the CPU
#             time the server used until then
#   rss0      VmRSS once it answers
#   on        wrk -t2 -c16 -d${DURATION:-20s} on /api/health, logging on
#   rss       VmRSS at the end of that load, and the logs stored then
#   off/on    then the same load (ROUNDS times, 10 s each) with logging
#             off (settings.logs.maxDays=0, which drops the stored logs)
#             and on again (maxDays=5), alternating, for the cost of logging
# Needs curl and wrk. About 220 bytes of disk per log, twice.
set -eu
bin=$1
n=$2
root=${ROOT:-${TMPDIR:-/tmp}/strongbox-logs-load}
dur=${DURATION:-20s}
export STRONGBOX_LOGS_MAX_MB=${STRONGBOX_LOGS_MAX_MB:-16384}
export STRONGBOX_SUPERUSER_EMAIL=load@example.com STRONGBOX_SUPERUSER_PASSWORD=load-test-password
export STRONGBOX_BCRYPT_COST=4

mkdir -p "$root"
if [ ! -d "$root/seed-$n/logs" ]; then
	"$bin" logs seed --n "$n" --dir "$root/seed-$n.tmp" >/dev/null
	mv "$root/seed-$n.tmp" "$root/seed-$n"
fi
run=$root/run-$n
rm -rf "$run"
cp -r "$root/seed-$n" "$run"
sync

start=$(date +%s%N)
"$bin" serve --dir "$run" --http 127.0.0.1:0 >"$root/serve.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$run"' EXIT
base=
until [ -n "$base" ] && curl -fs "$base/api/health" >/dev/null; do
	base=$(grep -o 'http://127\.0\.0\.1:[0-9]*' "$root/serve.log" | head -1)
	kill -0 $pid || { cat "$root/serve.log"; exit 1; }
	sleep 0.02
done
up=$(date +%s%N)
# CPU seconds (user + system) the server used until then: less noisy than
# the elapsed time on a shared machine.
cpu=$(awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' /proc/$pid/stat)
rss() { awk '/^VmRSS/ {printf "%.1f MB", $2/1024}' /proc/$pid/status; }
echo "logs seeded: $n"
echo "startup: $(( (up - start) / 1000000 )) ms ($cpu s of CPU)"
echo "rss0: $(rss)"

reqs() { wrk -t2 -c16 -d"$dur" "$base/api/health" | awk '/Requests\/sec/ {print $2}'; }
on=$(reqs)
rss_on=$(rss)
token=$(curl -fs -X POST "$base/api/collections/_superusers/auth-with-password" \
	-H 'Content-Type: application/json' \
	-d "{\"identity\":\"$STRONGBOX_SUPERUSER_EMAIL\",\"password\":\"$STRONGBOX_SUPERUSER_PASSWORD\"}" |
	sed 's/.*"token":"\([^"]*\)".*/\1/')
total=$(curl -fs -H "Authorization: $token" "$base/api/logs?perPage=1" | sed 's/.*"totalItems":\([0-9]*\).*/\1/')
echo "on: $on req/s"
echo "rss: $rss_on with $total logs stored"
setdays() {
	curl -fs -X PATCH -H "Authorization: $token" -H 'Content-Type: application/json' \
		-d "{\"logs\":{\"maxDays\":$1}}" "$base/api/settings" >/dev/null
}
dur=10s
for i in $(seq "${ROUNDS:-2}"); do
	setdays 0
	echo "off: $(reqs) req/s"
	setdays 5
	echo "on: $(reqs) req/s"
done
