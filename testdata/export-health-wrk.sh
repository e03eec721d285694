#!/bin/sh
# /api/health req/s with the log export on and off, alternating (the
# figure of logstore/otlp's documentation). Needs wrk and VictoriaLogs:
#
#	CGO_ENABLED=0 go build -o /tmp/x/strongbox .
#	VL=/opt/sbtools/bin/victoria-logs PAIRS=3 sh testdata/export-health-wrk.sh
#
# or, with a receiver that only reads and acknowledges (testdata/otlpsink),
# so that the figure is strongbox's own cost of exporting:
#
#	go build -o /tmp/x/otlpsink ./testdata/otlpsink
#	VL=/tmp/x/otlpsink DISCARD=1 PAIRS=3 sh testdata/export-health-wrk.sh
#
# Each run starts a fresh data dir, waits 1 s, then runs
# wrk -t2 -c16 -d10s; "on" exports every log (one per request) to a
# VictoriaLogs on loopback.
set -eu
BIN=${BIN:-/tmp/x/strongbox}
VL=${VL:?set VL to the victoria-logs binary}
PAIRS=${PAIRS:-3}
work=$(mktemp -d)
trap 'kill $vlpid 2>/dev/null; wait $vlpid 2>/dev/null; rm -rf "$work"' EXIT
if [ "${DISCARD:-}" = 1 ]; then
	"$VL" 127.0.0.1:19428 >/dev/null 2>&1 &
else
	"$VL" -httpListenAddr=127.0.0.1:19428 -storageDataPath="$work/vl" -loggerLevel=ERROR >/dev/null 2>&1 &
fi
vlpid=$!
sleep 2
run() { # $1 = on|off
	rm -rf "$work/sb"
	if [ "$1" = on ]; then
		OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://127.0.0.1:19428/insert/opentelemetry/v1/logs "$BIN" serve --http 127.0.0.1:18090 --dir "$work/sb" >/dev/null 2>&1 &
	else
		"$BIN" serve --http 127.0.0.1:18090 --dir "$work/sb" >/dev/null 2>&1 &
	fi
	pid=$!
	sleep 1
	rps=$(wrk -t2 -c16 -d10s http://127.0.0.1:18090/api/health | awk '/Requests\/sec/ {print $2}')
	kill $pid; wait $pid 2>/dev/null || true
	echo "$1 $rps"
}
i=0
while [ $i -lt "$PAIRS" ]; do
	if [ $((i % 2)) -eq 0 ]; then run off; run on; else run on; run off; fi
	i=$((i + 1))
done
