#!/usr/bin/env bash
# Server memory under load (issue 30): mpquic-server's resident set while it
# serves back-to-back downloads of one file on loopback, once over 2-path
# multipath sessions and once as plain HTTP/3 on one path, each mode in a
# fresh server process.
#
# Every second the server's VmRSS (/proc/PID/status) is sampled; for each
# mode the script prints the plateau (median of the samples in the second
# half of the run), the maximum, and the number of downloads done, then the
# ratio of the two plateaus. Each download is one mpquic-client process, run
# one after another (never two at once):
#   multipath: get over -paths 127.0.0.1,127.0.0.2 (a session, 2 paths);
#   plain:     h3-get (quic-go's http3 client, ALPN h3) over 127.0.0.1 to the
#              server's -addr (plain HTTP/3 on the session's port, issue 31),
#              or with -plain h3-addr to its -h3-addr (quic-go's http3
#              server: the only plain HTTP/3 before issue 31).
# Every download must succeed (exit 0, "sha256_ok":true); the first failure
# stops the run with exit status 1.
#
# Usage: scripts/server-rss.sh [-d SECONDS] [-size BYTES] [-bin DIR]
#                              [-plain addr|h3-addr] [-modes multipath,plain]
#                              [-o DIR]
#   -d      run time of each mode, seconds (default 300: 5 minutes)
#   -size   file size, bytes (default 20000000: 20 MB)
#   -bin    directory holding mpquic-server and mpquic-client (default bin;
#           build with make build, or another tree's go build -o DIR/)
#   -plain  where plain HTTP/3 is served (default addr)
#   -modes  which modes to run, in order (default multipath,plain)
#   -o      keep each mode's samples (MODE.rss, one "seconds kB" line per
#           sample) and server log there (default: a temporary directory)
# Environment: SERVER_FLAGS, extra flags for mpquic-server.
# Needs Linux (/proc) and 127.0.0.2 on lo (Linux routes all of 127/8 there).
set -u
dur=300 size=20000000 bin=bin plain=addr modes=multipath,plain out=
while [ $# -gt 0 ]; do
  case $1 in
    -d) dur=$2; shift 2 ;;
    -size) size=$2; shift 2 ;;
    -bin) bin=$2; shift 2 ;;
    -plain) plain=$2; shift 2 ;;
    -modes) modes=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    *) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
case $plain in addr | h3-addr) ;; *) echo "server-rss: -plain $plain: want addr or h3-addr" >&2; exit 2 ;; esac
for b in mpquic-server mpquic-client; do
  [ -x "$bin/$b" ] || { echo "server-rss: no $bin/$b (make build)" >&2; exit 2; }
done
tmp=$(mktemp -d)
srv=
cleanup() {
  [ -n "$srv" ] && kill "$srv" 2>/dev/null && wait "$srv" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
[ -n "$out" ] || out=$tmp/out
mkdir -p "$tmp/www" "$tmp/cert" "$out"
head -c "$size" /dev/urandom >"$tmp/www/f"

# port: a free UDP port on 127.0.0.1 (one the kernel just gave out and
# released).
port() { python3 -c 'import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

# rss PID: the process's resident set, kB.
rss() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status" 2>/dev/null; }

# summary FILE: "plateau_kB max_kB" of the samples (plateau: median of the
# second half).
summary() {
  awk '{v[NR] = $2; if ($2 > m) m = $2} END {
    h = int(NR / 2); n = NR - h
    for (i = 1; i <= n; i++) s[i] = v[h + i]
    for (i = 2; i <= n; i++) { x = s[i]; j = i - 1; while (j > 0 && s[j] > x) { s[j + 1] = s[j]; j-- }; s[j + 1] = x }
    med = (n % 2) ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
    print med, m }' "$1"
}

declare -A plateau
for mode in ${modes//,/ }; do
  addr=127.0.0.1:$(port) h3=127.0.0.1:$(port)
  # shellcheck disable=SC2086 # SERVER_FLAGS is a list of flags
  "$bin/mpquic-server" -dir "$tmp/www" -addr "$addr" -h3-addr "$h3" -dev-cert "$tmp/cert" ${SERVER_FLAGS:-} \
    >"$out/$mode.log" 2>&1 &
  srv=$!
  for _ in $(seq 50); do [ -s "$tmp/cert/cert.pem" ] && break; sleep 0.1; done
  sleep 0.5
  case $mode in
    multipath) cmd=("$bin/mpquic-client" -ca "$tmp/cert/cert.pem" -paths 127.0.0.1,127.0.0.2 -q -o /dev/null get "https://$addr/f") ;;
    plain)
      target=$addr; [ "$plain" = h3-addr ] && target=$h3
      cmd=("$bin/mpquic-client" -h3-addr "$target" -ca "$tmp/cert/cert.pem" -paths 127.0.0.1 -q -o /dev/null h3-get /f) ;;
    *) echo "server-rss: unknown mode $mode" >&2; exit 2 ;;
  esac
  : >"$out/$mode.rss"
  start=$(date +%s)
  (
    n=0
    while [ $(($(date +%s) - start)) -lt "$dur" ]; do
      if ! "${cmd[@]}" >"$tmp/last.json" 2>"$tmp/last.err" || ! grep -q '"sha256_ok":true' "$tmp/last.json"; then
        echo "server-rss: $mode download $((n + 1)) failed:" >&2; cat "$tmp/last.json" "$tmp/last.err" >&2
        echo fail >"$tmp/$mode.n"; exit 1
      fi
      n=$((n + 1)); echo "$n" >"$tmp/$mode.n"
    done
  ) &
  loader=$!
  while kill -0 "$loader" 2>/dev/null; do
    r=$(rss "$srv") || true
    [ -n "$r" ] || { echo "server-rss: the server exited; its log:" >&2; cat "$out/$mode.log" >&2; exit 1; }
    echo "$(($(date +%s) - start)) $r" >>"$out/$mode.rss"
    sleep 1
  done
  wait "$loader" || exit 1
  kill "$srv"; wait "$srv" 2>/dev/null; srv=
  read -r p m < <(summary "$out/$mode.rss")
  plateau[$mode]=$p
  printf '%-9s downloads %4s  RSS plateau %6.1f MiB  max %6.1f MiB  (%d samples)\n' \
    "$mode" "$(cat "$tmp/$mode.n")" "$(echo "$p" | awk '{print $1/1024}')" "$(echo "$m" | awk '{print $1/1024}')" \
    "$(wc -l <"$out/$mode.rss")"
done
if [ -n "${plateau[multipath]:-}" ] && [ -n "${plateau[plain]:-}" ]; then
  awk -v a="${plateau[multipath]}" -v b="${plateau[plain]}" 'BEGIN {printf "ratio     multipath/plain plateau %.2fx\n", a / b}'
fi
