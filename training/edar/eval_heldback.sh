#!/usr/bin/env bash
# EdAR on the held-back settings of issue 33 (docs/edar-generalisation.md):
#
#   training/edar/eval_heldback.sh                  # everything, then the table
#   EDAR_HB_ONLY="held-3path held-verizon" ...      # some settings
#   EDAR_HB_BEFORE=/tmp/base/testdata/edar.onnx     # also EdAR-p with a8db118's model
#   EDAR_HB_REPORT_ONLY=1 ...                       # the table only
#   EDAR_HB_BIN=/tmp/base/bin EDAR_MODEL=/tmp/base/testdata/edar.onnx \
#     EDAR_HB_OUT=... EDAR_HB_ONLINE=... ...        # the same on a8db118's binaries and model
#
# Per held-back setting (docs/edar-generalisation/scenarios/*.json), seeds
# 1..$EDAR_HB_SEEDS (3), every transfer shrunk to 8 MB (-max-bytes; the
# timed commuter runs its 30 s, and a setting with a "workload" runs its
# workload whole: shrinking would cut its requests or chunks): minrtt,
# blest, redundant, edar (EdAR-p,
# $EDAR_MODEL) and edar-o; minrtt with opportunistic reinjection; minrtt on
# each path alone (the single-path baselines); edar with $EDAR_HB_BEFORE if
# set. EdAR-o is EdAR-p adapted online (online_gym.py --family heldback:
# $EDAR_HB_FLOWS (28) warm-up flows of the settings without a workload, on
# seeds from 1001, never evaluated,
# ε = 0.1, 200 steps after every flow once the replay holds
# $EDAR_HB_LEARN_START (1,000) transitions) and then run greedily, as training/edar/evaluate.sh does for
# the paper's settings; $EDAR_HB_ADAPTATIONS (6) such adaptations, each a
# fresh online learning, whose greedy runs the table pools in the edar-o row
# and also counts one by one (one adaptation moves the model by more than
# the settings differ: docs/edar-generalisation.md). Every run is in
# virtual time. The table:
# cmd/edar-heldback (pkg/report's tie method).
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=${EDAR_HB_OUT:-docs/edar-generalisation/runs}
ONLINE=${EDAR_HB_ONLINE:-results/edar-heldback-online}
MODEL=${EDAR_MODEL:-testdata/edar.onnx}
SEEDS=${EDAR_HB_SEEDS:-3}
PAR=${EDAR_HB_PARALLEL:-2}
FLOWS=${EDAR_HB_FLOWS:-28}
LEARN_START=${EDAR_HB_LEARN_START:-1000}
STEPS=${EDAR_ONLINE_STEPS:-200}
ADAPT=${EDAR_HB_ADAPTATIONS:-6}
PY=${EDAR_PY:-.venv-train/bin/python}
DIR=docs/edar-generalisation/scenarios
ONLINE=$(realpath -m "$ONLINE")
MODEL=$(realpath -m "$MODEL")
BIN=${EDAR_HB_BIN:-bin}
BENCH=$BIN/mpquic-bench
log() { printf '%s eval_heldback: %s\n' "$(date -u +%T)" "$*" >&2; }

go build -o bin/ ./cmd/mpquic-bench ./cmd/mpq-gym ./cmd/edar-heldback
if [ -z "${EDAR_HB_REPORT_ONLY:-}" ]; then
	MPQ_GYM_BIN=$(cd "$BIN" && pwd)/mpq-gym
	export MPQ_GYM_BIN
	# Adaptation 1 in $ONLINE, adaptation K >= 2 in $ONLINE-aK: each a
	# fresh online learning by the same protocol (warm-up seeds 1001-1004
	# for all: the emulator is not bit-exact, so their flows differ anyway).
	online_dir() { if [ "$1" = 1 ]; then echo "$ONLINE"; else echo "$ONLINE-a$1"; fi; }
	mkdir -p "$OUT"
	rm -f "$OUT"/online-a*.json
	for k in $(seq 1 "$ADAPT"); do
		d=$(online_dir "$k")
		if [ ! -f "$d/model.onnx" ] || [ -n "${EDAR_HB_READAPT:-}" ]; then
			rm -rf "$d" && mkdir -p "$d"
			log "EdAR-o online learning on the held-back family (adaptation $k of $ADAPT), $FLOWS warm-up flows, $STEPS steps after each"
			(cd training/edar && "../../$PY" online_gym.py --model "$MODEL" --out "$d/model.onnx" \
				--family heldback --flows "$FLOWS" --steps "$STEPS" --learn-start "$LEARN_START" 2>"$d/online.log" | tail -1)
		fi
		if [ "$k" = 1 ]; then cp "$d/model.onnx.online.json" "$OUT/online.json"; else cp "$d/model.onnx.online.json" "$OUT/online-a$k.json"; fi
	done
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	for f in "$DIR"/*.json; do
		name=$(basename "$f" .json)
		case " ${EDAR_HB_ONLY:-$name} " in *" $name "*) ;; *) continue ;; esac
		o=$OUT/$name
		rm -rf "$o" && mkdir -p "$o"
		size="-max-bytes 8000000"
		grep -q '"timed": true' "$f" && size=""
		grep -q '"workload"' "$f" && size=""
		t0=$(date +%s)
		# shellcheck disable=SC2086
		MPQ_EDAR_ONLINE_DIR=$ONLINE MPQ_EDAR_EPSILON=0 $BENCH run -scenario-file "$f" $size -schedulers minrtt,blest,redundant,edar,edar-o \
			-edar-model "$MODEL" -seed 1 -seeds "$SEEDS" -parallel "$PAR" -out "$o/main" -q -no-report >/dev/null || log "$name: some runs failed"
		# shellcheck disable=SC2086
		$BENCH run -scenario-file "$f" $size -schedulers minrtt -opportunistic on -seed 1 -seeds "$SEEDS" -parallel "$PAR" \
			-out "$o/or" -q -no-report >/dev/null || log "$name: some minrtt+or runs failed"
		for k in $(seq 2 "$ADAPT"); do
			# shellcheck disable=SC2086
			MPQ_EDAR_ONLINE_DIR=$(online_dir "$k") MPQ_EDAR_EPSILON=0 $BENCH run -scenario-file "$f" $size -schedulers edar-o \
				-edar-model "$MODEL" -seed 1 -seeds "$SEEDS" -parallel "$PAR" -out "$o/adapt-$k" -q -no-report >/dev/null || log "$name: some adaptation $k runs failed"
		done
		if [ -n "${EDAR_HB_BEFORE:-}" ]; then
			# shellcheck disable=SC2086
			$BENCH run -scenario-file "$f" $size -schedulers edar -edar-model "$EDAR_HB_BEFORE" -seed 1 -seeds "$SEEDS" \
				-parallel "$PAR" -out "$o/before" -q -no-report >/dev/null || log "$name: some before runs failed"
		fi
		# Single-path baselines: the setting with path K alone (its ranges too).
		python3 - "$f" "$tmp" <<'EOF'
import json, os, sys
sc = json.load(open(sys.argv[1]))
base = os.path.dirname(os.path.abspath(sys.argv[1]))
for k, p in enumerate(sc["paths"]):
    one = dict(sc, name=f"{sc['name']}-only-{k}", paths=[p])
    for l in (p["up"], p["down"]):  # a relative trace is relative to the original file
        if l.get("trace") and not l["trace"].startswith("builtin:") and not os.path.isabs(l["trace"]):
            l["trace"] = os.path.normpath(os.path.join(base, l["trace"]))
    if "ranges" in sc:
        rp = sc["ranges"].get("paths", [])
        one["ranges"] = dict(sc["ranges"], paths=rp[k:k + 1])
    json.dump(one, open(os.path.join(sys.argv[2], f"only-{k}.json"), "w"))
EOF
		for s in "$tmp"/only-*.json; do
			k=$(basename "$s" .json)
			# shellcheck disable=SC2086
			$BENCH run -scenario-file "$s" $size -schedulers minrtt -seed 1 -seeds "$SEEDS" -parallel "$PAR" \
				-out "$o/single-${k#only-}" -q -no-report >/dev/null || log "$name: some single-path runs failed"
		done
		rm -f "$tmp"/only-*.json
		for d in "$o"/*/; do rm -rf "$d/edar-online" "$d/matrix.json"; done
		log "$name: done in $(($(date +%s) - t0)) s"
	done
fi
bin/edar-heldback -dir "$OUT"
