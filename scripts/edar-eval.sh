#!/usr/bin/env bash
# EdAR evaluation (docs/edar.md): every experiment runs in virtual time with
# mpquic-bench into docs/edar/<experiment>/, then scripts/edar_report.py
# writes docs/edar.md and its plots.
#
#   scripts/edar-eval.sh                 # everything (about 40 min on 2 shared, busy cores)
#   EDAR_EVAL_ONLY="handoff stable" scripts/edar-eval.sh
#   EDAR_EVAL_REPORT_ONLY=1 scripts/edar-eval.sh    # regenerate the page only
#
# EdAR-o (§V.C) per experiment family: the live model starts as
# testdata/edar.onnx; warm-up flows of the family's own scenarios with seeds
# disjoint from the evaluation seeds run ε-greedy (ε = 0.1) while
# training/edar/online.sh retrains asynchronously from their replay spool
# and the runs hot-reload each new model; then the trainer stops and the
# evaluation runs EdAR-o greedy (ε = 0) with the adapted model.
set -euo pipefail
cd "$(dirname "$0")/.."
set -f # scenario globs such as edar-setting-* are for mpquic-bench, not the shell

OUT=${EDAR_EVAL_OUT:-docs/edar}
PAR=${EDAR_EVAL_PARALLEL:-2}
STEPS=${EDAR_EVAL_ONLINE_STEPS:-300} # gradient steps per online training round
ONLY=${EDAR_EVAL_ONLY:-"handoff stable settings fig10 fig11"}
SCHEDS=minrtt,blest,peekaboo,edar,edar-o
PY=${EDAR_PY:-.venv-train/bin/python}
BENCH=bin/mpquic-bench
ONLINE=${EDAR_EVAL_ONLINE:-results/edar-online}
PAGE=${EDAR_EVAL_PAGE:-docs/edar.md}

log() { printf '%s edar-eval: %s\n' "$(date -u +%T)" "$*" >&2; }

# Experiments: FLAGS (mpquic-bench scenario flags) and FAMILY.
. scripts/edar-experiments.sh
# Evaluation seeds per experiment (seeds 1..N), and EdAR-o warm-up seeds per
# round and family (seeds from 1001, never evaluated; each seed is one flow
# of every scenario of the family: a handoff run, 5 settings, 5 delays, 6
# loss rates).
declare -A SEEDS=([handoff]=5 [stable]=3 [settings]=3 [fig10]=3 [fig11]=3)
declare -A WARM=([handoff]=2 [settings]=1 [fig10]=1 [fig11]=1)
ROUNDS=${EDAR_EVAL_ROUNDS:-4}
[ -n "${EDAR_EVAL_SEEDS:-}" ] && for k in "${!SEEDS[@]}"; do SEEDS[$k]=$EDAR_EVAL_SEEDS; done

# wait_trainer DIR PID: until the live model is newer than every spool file
# and no training runs (at most 5 minutes).
wait_trainer() {
	local dir=$1 tpid=$2 newest
	for _ in $(seq 150); do
		sleep 2
		newest=$(find "$dir/replay" -name '*.edar' -newer "$dir/model.onnx" | head -1)
		[ -z "$newest" ] && ! pgrep -g "$tpid" -f train.py >/dev/null && return 0
	done
	log "trainer did not catch up within 5 minutes"
}

# adapt FAMILY: online learning for one experiment family (Algorithm 2):
# ROUNDS rounds of warm-up flows; after each, the asynchronous trainer
# retrains from the replay spool and the next round's runs load (and, mid-run,
# hot-reload) the new model.
adapt() {
	local fam=$1 dir=$ONLINE/$1
	rm -rf "$dir"
	mkdir -p "$dir/replay"
	cp testdata/edar.onnx "$dir/model.onnx"
	log "$fam: EdAR-o online learning, $ROUNDS rounds of warm-up seeds (${WARM[$fam]} per round, from 1001; ε = 0.1), trainer on every new spool"
	EDAR_ONLINE_ARGS=--randomize-prev-action setsid training/edar/online.sh "$dir/replay" "$dir/model.onnx" "$STEPS" 2 >"$dir/trainer.log" 2>&1 &
	local tpid=$! t0 round
	t0=$(date +%s)
	for round in $(seq "$ROUNDS"); do
		# shellcheck disable=SC2086
		MPQ_EDAR_ONLINE_DIR=$dir MPQ_EDAR_EPSILON=0.1 $BENCH run -schedulers edar-o ${FLAGS[$fam]} \
			-seed $((1001 + (round - 1) * WARM[$fam])) -seeds "${WARM[$fam]}" -parallel "$PAR" -out "$dir/warmup-$round" -no-report -q >/dev/null || true
		wait_trainer "$dir" "$tpid"
	done
	kill -- -"$tpid" 2>/dev/null || true
	wait "$tpid" 2>/dev/null || true
	local rounds flows
	rounds=$(grep -c '^wrote ' "$dir/trainer.log" 2>/dev/null || true)
	flows=$(find "$dir" -path '*/warmup-*' -name results.jsonl -exec cat {} + 2>/dev/null | grep -c . || true) # no globs: set -f
	log "$fam: online learning done in $(( $(date +%s) - t0 )) s, ${flows:-0} flows, ${rounds:-0} training rounds"
	printf '{"family":"%s","warmup_flows":%d,"training_rounds":%d,"steps_per_round":%d,"seconds":%d}\n' \
		"$fam" "${flows:-0}" "${rounds:-0}" "$STEPS" "$(( $(date +%s) - t0 ))" >"$dir/online.json"
	grep '^summary ' "$dir/trainer.log" | tail -1 | sed 's/^summary //' >"$dir/last-round.json" || true
}

if [ -z "${EDAR_EVAL_REPORT_ONLY:-}" ]; then
	go build -o bin/ ./cmd/mpquic-bench
	[ -f testdata/edar.onnx ] || { echo "edar-eval: testdata/edar.onnx missing: run make train" >&2; exit 1; }
	declare -A adapted=()
	for exp in $ONLY; do
		fam=${FAMILY[$exp]}
		if [ -z "${adapted[$fam]:-}" ] && [ ! -f "$ONLINE/$fam/online.json" -o -n "${EDAR_EVAL_READAPT:-}" ]; then
			adapt "$fam"
		fi
		adapted[$fam]=1
		mkdir -p "$OUT/$exp"
		cp "$ONLINE/$fam/online.json" "$OUT/$exp/online.json"
		cp "$ONLINE/$fam/last-round.json" "$OUT/$exp/online-last-round.json" 2>/dev/null || true
		log "$exp: running $SCHEDS, ${SEEDS[$exp]} seeds"
		t0=$(date +%s)
		# shellcheck disable=SC2086
		MPQ_EDAR_ONLINE_DIR=$ONLINE/$fam MPQ_EDAR_EPSILON=0 $BENCH run -schedulers $SCHEDS ${FLAGS[$exp]} \
			-seed 1 -seeds "${SEEDS[$exp]}" -parallel "$PAR" -out "$OUT/$exp" -q >/dev/null || log "$exp: some runs failed (see $OUT/$exp/results.jsonl)"
		printf '{"experiment":"%s","flags":"%s","seeds":%d,"wall_seconds":%d}\n' "$exp" "${FLAGS[$exp]}" "${SEEDS[$exp]}" \
			"$(( $(date +%s) - t0 ))" >"$OUT/$exp/run.json"
		log "$exp: done in $(( $(date +%s) - t0 )) s"
	done
fi
"$PY" scripts/edar_report.py --dir "$OUT" --out "$PAGE"
