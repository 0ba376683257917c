#!/usr/bin/env bash
# The evaluation of the EdAR retrained through the environment
# (docs/edar-gym.md), in one command (`make edar-eval`):
#
#   training/edar/evaluate.sh                      # adapt EdAR-o where needed, run everything, write the page
#   EDAR_EVAL_ONLY="handoff stable" training/edar/evaluate.sh
#   EDAR_EVAL_READAPT=1 ...                        # redo EdAR-o's online learning
#   EDAR_EVAL_REPORT_ONLY=1 ...                    # the page only
#
# EdAR-p is $EDAR_MODEL (testdata/edar.onnx, `make train`). EdAR-o, per
# experiment family: online_gym.py adapts EdAR-p on warm-up flows of the
# family's scenarios (seeds from 1001, never evaluated; ε = 0.1, training
# after every flow) into $ONLINE/<family>/model.onnx, which mpquic-bench's
# edar-o then runs greedily (MPQ_EDAR_EPSILON=0). The heuristics: minRTT,
# minRTT with the session's opportunistic reinjection (minrtt+or), BLEST and
# redundant. Every run is in virtual time.
set -euo pipefail
cd "$(dirname "$0")/../.."
set -f # scenario globs are for mpquic-bench

OUT=${EDAR_EVAL_OUT:-docs/edar-gym}
# The page: docs/edar-gym.md for the committed runs, else beside the runs.
PAGE=docs/edar-gym.md
[ "$OUT" = docs/edar-gym ] || PAGE=$OUT/report.md
ONLINE=${EDAR_EVAL_ONLINE:-results/edar-gym-online}
MODEL=${EDAR_MODEL:-testdata/edar.onnx}
PAR=${EDAR_EVAL_PARALLEL:-2}
PY=${EDAR_PY:-.venv-train/bin/python}
BENCH=bin/mpquic-bench
ONLY=${EDAR_EVAL_ONLY:-"handoff stable settings fig10 fig11"}
SCHEDS=minrtt,blest,redundant,edar,edar-o

. scripts/edar-experiments.sh # FLAGS (mpquic-bench scenario flags) and FAMILY
declare -A SEEDS=([handoff]=5 [stable]=5 [settings]=5 [fig10]=3 [fig11]=3)
# EdAR-o warm-up flows per family ("several or tens of training episodes",
# §VI) and gradient steps after each.
declare -A FLOWS=([handoff]=${EDAR_ONLINE_FLOWS_HANDOFF:-12} [settings]=20 [fig10]=15 [fig11]=18)
STEPS=${EDAR_ONLINE_STEPS:-200}
ADAPT=${EDAR_EVAL_ADAPTATIONS:-3} # EdAR-o adaptations per family, pooled

log() { printf '%s evaluate: %s\n' "$(date -u +%T)" "$*" >&2; }

if [ -z "${EDAR_EVAL_REPORT_ONLY:-}" ]; then
	go build -o bin/ ./cmd/mpquic-bench ./cmd/mpq-gym
	export MPQ_GYM_BIN=$PWD/bin/mpq-gym
	[ -f "$MODEL" ] || { echo "evaluate: $MODEL missing: run make train" >&2; exit 1; }
	declare -A adapted=()
	for exp in $ONLY; do
		fam=${FAMILY[$exp]}
		dir=$ONLINE/$fam
		# Adaptation 1 in $dir, K >= 2 in $dir-aK: fresh online learnings by
		# the same protocol (one moves the model by more than the settings
		# differ: docs/edar-generalisation.md); eval_report.py pools their
		# greedy runs in the EdAR-o row.
		for k in $(seq 1 "$ADAPT"); do
			d=$dir
			[ "$k" = 1 ] || d=$dir-a$k
			if [ -z "${adapted[$fam]:-}" ] && { [ ! -f "$d/model.onnx" ] || [ -n "${EDAR_EVAL_READAPT:-}" ]; }; then
				rm -rf "$d"
				mkdir -p "$d"
				log "$fam: EdAR-o online learning through mpqgym (adaptation $k of $ADAPT), ${FLOWS[$fam]} warm-up flows, $STEPS steps after each"
				(cd training/edar && "../../$PY" online_gym.py --model "../../$MODEL" --out "../../$d/model.onnx" \
					--family "$fam" --flows "${FLOWS[$fam]}" --steps "$STEPS" 2>"../../$d/online.log" | tail -1)
			fi
		done
		adapted[$fam]=1
		mkdir -p "$OUT/$exp"
		rm -rf "$OUT/$exp"/adapt-*
		cp "$dir/model.onnx.online.json" "$OUT/$exp/online.json"
		log "$exp: $SCHEDS and minrtt+or, ${SEEDS[$exp]} seeds"
		t0=$(date +%s)
		# shellcheck disable=SC2086
		MPQ_EDAR_ONLINE_DIR=$dir MPQ_EDAR_EPSILON=0 $BENCH run -schedulers $SCHEDS ${FLAGS[$exp]} -edar-model "$MODEL" \
			-seed 1 -seeds "${SEEDS[$exp]}" -parallel "$PAR" -out "$OUT/$exp" -q -no-report >/dev/null ||
			log "$exp: some runs failed (see $OUT/$exp/results.jsonl)"
		# shellcheck disable=SC2086
		$BENCH run -schedulers minrtt -opportunistic on ${FLAGS[$exp]} -seed 1 -seeds "${SEEDS[$exp]}" \
			-parallel "$PAR" -out "$OUT/$exp/or" -q -no-report >/dev/null || log "$exp: some minrtt+or runs failed"
		for k in $(seq 2 "$ADAPT"); do
			# shellcheck disable=SC2086
			MPQ_EDAR_ONLINE_DIR=$dir-a$k MPQ_EDAR_EPSILON=0 $BENCH run -schedulers edar-o ${FLAGS[$exp]} -edar-model "$MODEL" \
				-seed 1 -seeds "${SEEDS[$exp]}" -parallel "$PAR" -out "$OUT/$exp/adapt-$k" -q -no-report >/dev/null ||
				log "$exp: some adaptation $k runs failed"
			cp "$dir-a$k/model.onnx.online.json" "$OUT/$exp/adapt-$k/online.json"
			rm -rf "$OUT/$exp/adapt-$k/edar-online" "$OUT/$exp/adapt-$k/matrix.json"
		done
		rm -rf "$OUT/$exp/edar-online"
		printf '{"experiment":"%s","flags":"%s","seeds":%d,"wall_seconds":%d}\n' "$exp" "${FLAGS[$exp]}" "${SEEDS[$exp]}" \
			"$(( $(date +%s) - t0 ))" >"$OUT/$exp/run.json"
		log "$exp: done in $(( $(date +%s) - t0 )) s"
	done
fi
"$PY" training/edar/eval_report.py --dir "$OUT" --out "$PAGE"
