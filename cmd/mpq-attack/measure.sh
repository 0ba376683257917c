#!/usr/bin/env bash
# measure.sh BIN_DIR OUT_FILE: issue 10's before/after figures on loopback.
# BIN_DIR holds mpquic-server, mpquic-client and mpq-attack built from one
# tree (main, or an older commit with a copy of cmd/mpq-attack). Each attack
# runs against a fresh server for at most 20 s; results are JSON lines.
set -euo pipefail
bin=$1 out=$2
work=$(mktemp -d /tmp/mpq-attack.XXXXXX)
trap 'kill $spid 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/data" "$work/cert"
head -c 50000000 /dev/urandom >"$work/data/big"
port=$((20000 + RANDOM % 20000))
addr=127.0.0.1:$port
start_server() {
  "$bin/mpquic-server" -dir "$work/data" -addr "$addr" -dev-cert "$work/cert" >>"$work/server.log" 2>&1 &
  spid=$!
  sleep 1
}
stop_server() { kill "$spid"; wait "$spid" || true; }
legit() { # one 2-path 50 MB download: its JSON line
  "$bin/mpquic-client" -addr "$addr" -ca "$work/cert/cert.pem" -paths 127.0.0.1,127.0.0.1 -q get big -o /dev/null
}
atk() { "$bin/mpq-attack" "$1" -addr "$addr" -ca "$work/cert/cert.pem" -pid "$spid" "${@:2}"; }
: >"$out"
# item 2 baseline: the legit download alone
start_server; echo "{\"run\":\"legit-alone\",\"client\":$(legit)}" >>"$out"; stop_server
# item 1: overlapping out-of-order segments, 2 sessions
start_server; echo "{\"run\":\"overlap\",\"result\":$(atk overlap -sessions 2 -duration 20s)}" >>"$out"; stop_server
# item 2: ack requests against a fragmented buffer, 2 sessions, with a legit download 2 s in
start_server
atk ackreq -sessions 2 -duration 20s >"$work/ackreq.json" &
apid=$!
sleep 2
echo "{\"run\":\"ackreq+legit\",\"client\":$(legit)}" >>"$out"
wait $apid
echo "{\"run\":\"ackreq\",\"result\":$(cat "$work/ackreq.json")}" >>"$out"
stop_server
# item 2 again, with the most holes the current session allows (its worst case)
start_server
atk ackreq -sessions 2 -duration 20s -holes 4094 >"$work/ackreq.json" &
apid=$!
sleep 2
echo "{\"run\":\"ackreq4094+legit\",\"client\":$(legit)}" >>"$out"
wait $apid
echo "{\"run\":\"ackreq4094\",\"result\":$(cat "$work/ackreq.json")}" >>"$out"
stop_server
# item 3: forged 2^62-1 window, no acknowledgements, 10 sessions
start_server; echo "{\"run\":\"window\",\"result\":$(atk window -sessions 10 -duration 20s -file big)}" >>"$out"; stop_server
# issue 21 item 7: HTTP/3 violations (one round per session) and cancelled requests
for a in "h3-second-control -sessions 2" "h3-data-first -sessions 2" "h3-big-headers -sessions 2" \
  "h3-cancel -sessions 1 -requests 10000" "h3-cancel -sessions 4 -requests 100000"; do
  start_server; echo "{\"run\":\"${a%% *}\",\"result\":$(atk $a -duration 60s)}" >>"$out"; stop_server
done
# item 5: Initial flood against a server in the attack's own process (goroutines counted)
echo "{\"run\":\"initials\",\"result\":$("$bin/mpq-attack" initials -inproc "$work/data" -count 15000 -garbage 15000 -sessions 64 -duration 3s)}" >>"$out"
tail -n 3 "$work/server.log" >&2
