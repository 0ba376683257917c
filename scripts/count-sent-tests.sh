#!/bin/sh
# Counts pkg/session's Test functions and how many assert what the session
# sends (issue 30). -v lists each with its verdict. See count-sent-tests.go.
cd "$(dirname "$0")/.." && exec ${GO:-go} run scripts/count-sent-tests.go "$@"
