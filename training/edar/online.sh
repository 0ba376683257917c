#!/usr/bin/env bash
# EdAR-o trainer loop (§V.C): retrain from the live model whenever the replay
# spool changes, and replace the model atomically for the Go edar.Watcher.
#
#   training/edar/online.sh REPLAY MODEL.onnx [STEPS] [POLL_SECONDS]
#   EDAR_ONLINE_ARGS="--randomize-prev-action" training/edar/online.sh ...   # extra train.py flags
#
# REPLAY is a transition file or a directory of them (mpquic-bench's EdAR-o
# spools one file per process into $MPQ_EDAR_ONLINE_DIR/replay/).
set -euo pipefail
replay="$(realpath -m "$1")" model="$(realpath -m "$2")" steps="${3:-500}" poll="${4:-5}" # absolute: train.py runs in $here
here="$(cd "$(dirname "$0")" && pwd)"
py="${EDAR_PY:-$here/../../.venv-train/bin/python}"
last=""
while true; do
	if [ -e "$replay" ]; then
		stamp="$(stat -c '%Y %s' "$replay")"
		if [ "$stamp" != "$last" ]; then
			last="$stamp"
			init=()
			[ -f "$model" ] && init=(--init "$model")
			(cd "$here" && "$py" train.py --transitions "$replay" --out "$model" --steps "$steps" "${init[@]}" ${EDAR_ONLINE_ARGS:-}) ||
				echo "online.sh: training failed; keeping the current model" >&2
		fi
	fi
	sleep "$poll"
done
