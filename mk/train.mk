# EdAR offline training (training/edar, Python: JAX + optax on CPU).
#
#   make train                      collect transitions through the training
#                                   environment if there are none (Algorithm 1,
#                                   training/edar/collect_gym.py over mpqgym), train on
#                                   $(EDAR_TRANSITIONS) → $(EDAR_MODEL), curve and
#                                   times in $(EDAR_DOCS)/ (docs/edar-generalisation.md has the figures)
#   make train-collect              only the data collection (through mpqgym)
#   make train-collect-go           settings i-iii with cmd/edar-collect (no Python; the
#                                   space of issue 33 is collected only through mpqgym)
#   make edar-eval                  EdAR-o's online learning through mpqgym and the
#                                   whole evaluation against the heuristics →
#                                   docs/edar-gym.md (training/edar/evaluate.sh)
#   make train-test                 the trainer's unit tests (reader, export parity, the report's pooling)
#   make train-synthetic            prove the pipeline end to end on SYNTHETIC
#                                   transitions (Go writes → Python trains →
#                                   ONNX → Go loads it in gonet and ort, parity)
#
# The virtualenv lives in .venv-train (about 0.9 GB; created on first use).

EDAR_VENV        ?= .venv-train
EDAR_PY          := $(EDAR_VENV)/bin/python
EDAR_TRANSITIONS ?= training/edar/out/space-transitions/
EDAR_MODEL       ?= testdata/edar.onnx
EDAR_STEPS       ?= 20000
EDAR_SEED        ?= 0
# Data collection (collect_gym.py through mpqgym): 1,200 flows, each network
# drawn from the training space of training/edar/space.py (2-3 paths,
# rates, delays, loss, queues, receive buffers, outages, handoffs, traces;
# the held-back settings of docs/edar-generalisation.md never drawn), the
# mode redrawn every 25 TIs on average (issue 33). The paper's collection
# over settings i-iii (issue 25's model):
#   EDAR_COLLECT_ARGS='--settings i,ii,iii --flows 100 --min-bytes 10000000 --max-bytes 25000000 --seed 1 --procs 2'
EDAR_COLLECT_ARGS ?= --space 1200 --switch-every 25 --seed 1 --procs 2
EDAR_GO_COLLECT_ARGS ?= -settings i,ii,iii -flows 100 -min-bytes 10000000 -max-bytes 25000000 -seed 1
EDAR_DOCS        ?= docs/edar-generalisation/train
EDAR_TRAIN_ARGS  ?= --randomize-prev-action
EDAR_SYNTH_DIR   ?= training/edar/out/synthetic

$(EDAR_VENV)/.installed: training/edar/requirements.txt python/mpqgym/pyproject.toml
	python3 -m venv $(EDAR_VENV)
	printf '*\n' > $(EDAR_VENV)/.gitignore
	$(EDAR_PY) -m pip install -q -r training/edar/requirements.txt
	$(EDAR_PY) -m pip install -q -e python/mpqgym
	touch $@

.PHONY: train train-venv train-synthetic train-test train-collect train-collect-go edar-eval
train-venv: $(EDAR_VENV)/.installed

# The collection runs through the environment (mpq-gym processes, one per
# --procs), so the Go side is built first.
EDAR_COLLECT = cd training/edar && MPQ_GYM_BIN=$(abspath $(BIN))/mpq-gym ../../$(EDAR_PY) collect_gym.py --out $(abspath $(EDAR_TRANSITIONS)) $(EDAR_COLLECT_ARGS)

train: train-venv gym
	@mkdir -p $(EDAR_DOCS)
	@set -o pipefail; t0=$$(date +%s); \
	if ! find $(EDAR_TRANSITIONS) -name '*.edar' 2>/dev/null | grep -q .; then \
	  echo "train: no transitions under $(EDAR_TRANSITIONS): collecting them through mpqgym (collect_gym.py $(EDAR_COLLECT_ARGS))"; \
	  ($(EDAR_COLLECT)) 2>&1 | tee $(EDAR_DOCS)/collect.log || exit 1; \
	fi; \
	t1=$$(date +%s); \
	python3 scripts/edar_collect_summary.py $(EDAR_TRANSITIONS) > $(EDAR_DOCS)/collect-summary.json || exit 1; \
	cd training/edar && ../../$(EDAR_PY) train.py --transitions $(abspath $(EDAR_TRANSITIONS)) \
	  --out $(abspath $(EDAR_MODEL)) --steps $(EDAR_STEPS) --seed $(EDAR_SEED) $(EDAR_TRAIN_ARGS) | tee $(abspath $(EDAR_DOCS))/train.log || exit 1; \
	cd ../..; t2=$$(date +%s); \
	mv -f $(EDAR_MODEL).curve.png $(EDAR_DOCS)/training-curve.png; mv -f $(EDAR_MODEL).curve.csv $(EDAR_DOCS)/training-curve.csv; \
	mkdir -p training/edar/out; mv -f $(EDAR_MODEL).golden.json training/edar/out/edar.onnx.golden.json; \
	printf 'make train on %s, %s cores, load average %s\ncollection (skipped if the transitions existed): %d s\ntraining incl. venv check, loading and export: %d s\ntotal: %d s\n' \
	  "$$(date -u +%FT%TZ)" "$$(nproc)" "$$(cut -d' ' -f1-3 /proc/loadavg)" $$((t1-t0)) $$((t2-t1)) $$((t2-t0)) | tee $(EDAR_DOCS)/train-time.txt

train-collect: train-venv gym
	$(EDAR_COLLECT)

train-collect-go:
	$(GO) run ./cmd/edar-collect -o $(EDAR_TRANSITIONS) $(EDAR_GO_COLLECT_ARGS)

edar-eval: train-venv gym build
	training/edar/evaluate.sh

train-test: train-venv
	cd training/edar && ../../$(EDAR_PY) -m unittest -v test_edar test_space test_eval_report

train-synthetic: train-venv onnxruntime
	rm -rf $(EDAR_SYNTH_DIR)
	go run ./sched/edar/cmd/edar-synth -o $(EDAR_SYNTH_DIR)/transitions -flows 8 -seconds 20
	cd training/edar && ../../$(EDAR_PY) train.py --synthetic --steps 3000 \
	  --transitions $(abspath $(EDAR_SYNTH_DIR))/transitions --out $(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx
	MPQ_EDAR_MODEL=$(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx \
	  go test -count=1 -run 'TestModel|TestParity' -v ./pkg/model/gonet ./pkg/model/ort
