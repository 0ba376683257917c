#!/usr/bin/env bash
# Runs the concurrent packages' tests under the race detector (short mode),
# a few tests per process.
#
# Go 1.26's race detector can crash inside a testing/synctest bubble
# ("ThreadSanitizer: CHECK failed ... kEpochLast", golang/go#78156, open
# upstream); most of these tests run in bubbles. Each group of tests runs in
# its own process, which keeps the detector's per-thread state small, and a
# group that dies of that crash, and only of it, runs again (at most 3
# times). A data race report, or any test failure, fails at once.
#
# Usage: scripts/race.sh PKG...
set -u
GO=${GO:-go}
per=${RACE_GROUP:-6} # tests per process
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
groups=0
failed=0
for pkg in "$@"; do
  bin="$tmp/$(echo "$pkg" | tr '/.' '__').test"
  if ! "$GO" test -race -c -o "$bin" "$pkg"; then
    echo "race: $pkg does not build"; exit 1
  fi
  [ -x "$bin" ] || continue # no test files
  dir=$("$GO" list -f '{{.Dir}}' "$pkg")
  mapfile -t names < <(cd "$dir" && "$bin" -test.list '.*' | grep -E '^(Test|Example|Fuzz)')
  for ((i = 0; i < ${#names[@]}; i += per)); do
    chunk=("${names[@]:i:per}")
    re="^($(IFS='|'; echo "${chunk[*]}"))\$"
    groups=$((groups + 1))
    for attempt in 1 2 3; do
      out="$tmp/out"
      (cd "$dir" && "$bin" -test.short -test.count=1 -test.timeout=20m -test.run "$re") >"$out" 2>&1
      rc=$?
      if [ $rc -eq 0 ]; then
        echo "race ok   $pkg ${chunk[*]}"
        break
      fi
      if grep -q 'ThreadSanitizer: CHECK failed' "$out" && ! grep -q 'WARNING: DATA RACE' "$out" && [ $attempt -lt 3 ]; then
        echo "race: $pkg ${chunk[*]}: the detector crashed (golang/go#78156); running the group again"
        continue
      fi
      cat "$out"
      echo "race FAIL $pkg ${chunk[*]}"
      failed=$((failed + 1))
      break
    done
  done
done
echo "race: $((groups - failed)) passed, $failed failed"
[ $failed -eq 0 ]
