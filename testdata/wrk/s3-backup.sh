#!/bin/bash
# s3-backup.sh measures backups on S3 (issue 22) against a built strongbox
# binary and a versitygw binary (an S3 gateway, posix backend) on loopback:
#
#	go build -o /tmp/strongbox . && STRONGBOX_S3_GATEWAY=/path/to/versitygw \
#	  testdata/wrk/s3-backup.sh /tmp/strongbox 1000000
#
# It seeds N request logs into a fresh data dir (`strongbox logs seed`),
# serves it, and prints, for a backup to the local folder and then two to
# the bucket (backups.s3 enabled through PATCH /api/settings, checked with
# POST /api/settings/test/s3): the wall time of POST /api/backups until its
# answer, the server's VmRSS before and its peak during the backup
# (sampled every 50 ms), and the latency of GET /api/health under
# `wrk -t1 -c1` meanwhile (its Max is the longest request); the archive's
# size; the time of a restore from the bucket until its 204 and from the
# 204 until the restarted server answers; and GET /api/backups over 5,000
# more objects in the bucket (median of 7). Needs curl, wrk and python3.
set -u
bin=$1
n=$2
gw=${STRONGBOX_S3_GATEWAY:?set STRONGBOX_S3_GATEWAY to a versitygw binary}
w=$(mktemp -d)
trap 'kill $sb $gwpid 2>/dev/null; wait 2>/dev/null; rm -rf "$w"' EXIT
mkdir -p "$w/gw/bkt"
export ROOT_ACCESS_KEY=AKFIG ROOT_SECRET_KEY=figsecret123456
"$gw" --port 127.0.0.1:17070 posix "$w/gw" >"$w/gw.log" 2>&1 &
gwpid=$!
STRONGBOX_LOGS_MAX_MB=16384 "$bin" logs seed -n "$n" --dir "$w/data" >/dev/null
STRONGBOX_SUPERUSER_EMAIL=fig@example.com STRONGBOX_SUPERUSER_PASSWORD=Fig-password-123 STRONGBOX_BCRYPT_COST=4 \
	"$bin" serve --http 127.0.0.1:17090 --dir "$w/data" >"$w/sb.log" 2>&1 &
sb=$!
b=http://127.0.0.1:17090
for _ in $(seq 100); do curl -sf "$b/api/health" >/dev/null && break; sleep 0.1; done
tok=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"identity":"fig@example.com","password":"Fig-password-123"}' \
	"$b/api/collections/_superusers/auth-with-password" | python3 -c 'import json,sys;print(json.load(sys.stdin)["token"])')
h="Authorization: $tok"
rss() { awk '/VmRSS/{print $2}' /proc/$sb/status; }
backup() {
	local r0 peak r t0 t1 cp wp
	r0=$(rss); peak=$r0
	wrk -t1 -c1 -d60s --latency --timeout 5s "$b/api/health" >"$w/wrk-$1.txt" 2>&1 &
	wp=$!
	sleep 1
	t0=$(date +%s%N)
	curl -s -o /dev/null -w '%{http_code}' -X POST -H "$h" -H 'Content-Type: application/json' \
		-d "{\"name\":\"$1.zip\"}" "$b/api/backups" >"$w/code-$1.txt" &
	cp=$!
	while kill -0 $cp 2>/dev/null; do r=$(rss); [ "$r" -gt "$peak" ] && peak=$r; sleep 0.05; done
	t1=$(date +%s%N)
	kill -INT $wp; wait $wp 2>/dev/null
	echo "$1: create $(cat "$w/code-$1.txt") in $(((t1 - t0) / 1000000)) ms; RSS $((r0 / 1024)) MB, peak $((peak / 1024)) MB (+$(((peak - r0) / 1024)) MB); /api/health meanwhile: $(grep -E 'Latency  |requests in' "$w/wrk-$1.txt" | tr -s ' ' | tr '\n' ' ')"
}
backup local1
ls -l "$w/data/backups/"*.zip | awk '{print "local archive:", $5, "bytes"}'
curl -s -X PATCH -H "$h" -H 'Content-Type: application/json' -o /dev/null -w 'enable backups.s3: %{http_code}\n' \
	-d '{"backups":{"s3":{"enabled":true,"bucket":"bkt","region":"us-east-1","endpoint":"http://127.0.0.1:17070","accessKey":"AKFIG","secret":"figsecret123456","forcePathStyle":true}}}' "$b/api/settings"
curl -s -X POST -H "$h" -H 'Content-Type: application/json' -d '{"filesystem":"backups"}' -o /dev/null \
	-w 'test s3: %{http_code}\n' "$b/api/settings/test/s3"
backup s3one
ls -l "$w/gw/bkt" | awk '/zip/{print "bucket object:", $5, "bytes", $9}'
backup s3two
t0=$(date +%s%N)
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "$h" "$b/api/backups/s3one.zip/restore")
t1=$(date +%s%N)
for _ in $(seq 600); do
	c=$(curl -s -o /dev/null -w '%{http_code}' -H "$h" "$b/api/backups")
	[ "$c" = 200 ] && break
	sleep 0.05
done
t2=$(date +%s%N)
echo "restore from S3: $code after $(((t1 - t0) / 1000000)) ms; answering again $(((t2 - t1) / 1000000)) ms after the 204"
for i in $(seq -w 1 5000); do echo x >"$w/gw/bkt/list_$i.zip"; done
for _ in 1 2 3 4 5 6 7; do curl -s -o /dev/null -w '%{time_total}\n' -H "$h" "$b/api/backups"; done |
	sort -n | sed -n 4p | awk '{printf "GET /api/backups over 5,000 more objects, median of 7: %.0f ms\n", $1 * 1000}'
