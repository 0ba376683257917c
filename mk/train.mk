# EdAR offline training (training/edar, Python: JAX + optax on CPU).
#
#   make train                      collect transitions in virtual time if there are
#                                   none (Algorithm 1, cmd/edar-collect), train on
#                                   $(EDAR_TRANSITIONS) → $(EDAR_MODEL), curve and
#                                   times in docs/edar/ (about 20 min on 2 cores)
#   make train-collect              only the data collection
#   make train-test                 the trainer's unit tests (reader, export parity)
#   make train-synthetic            prove the pipeline end to end on SYNTHETIC
#                                   transitions (Go writes → Python trains →
#                                   ONNX → Go loads it in gonet and ort, parity)
#
# The virtualenv lives in .venv-train (about 0.9 GB; created on first use).

EDAR_VENV        ?= .venv-train
EDAR_PY          := $(EDAR_VENV)/bin/python
EDAR_TRANSITIONS ?= training/edar/out/transitions/
EDAR_MODEL       ?= testdata/edar.onnx
EDAR_STEPS       ?= 10000
EDAR_SEED        ?= 0
# Data collection (cmd/edar-collect): 100 flows per setting i-iii as in the
# paper, of 10-25 MB (the paper: 10-100 MB), scaled down for 2 shared cores,
# see docs/edar.md. EDAR_COLLECT_ARGS overrides.
EDAR_COLLECT_ARGS ?= -settings i,ii,iii -flows 100 -min-bytes 10000000 -max-bytes 25000000 -seed 1
EDAR_DOCS        ?= docs/edar
EDAR_TRAIN_ARGS  ?= --randomize-prev-action
EDAR_SYNTH_DIR   ?= training/edar/out/synthetic

$(EDAR_VENV)/.installed: training/edar/requirements.txt
	python3 -m venv $(EDAR_VENV)
	printf '*\n' > $(EDAR_VENV)/.gitignore
	$(EDAR_PY) -m pip install -q -r training/edar/requirements.txt
	touch $@

.PHONY: train train-venv train-synthetic train-test train-collect
train-venv: $(EDAR_VENV)/.installed

train: train-venv
	@mkdir -p $(EDAR_DOCS)
	@set -o pipefail; t0=$$(date +%s); \
	if ! find $(EDAR_TRANSITIONS) -name '*.edar' 2>/dev/null | grep -q .; then \
	  echo "train: no transitions under $(EDAR_TRANSITIONS): collecting them (cmd/edar-collect $(EDAR_COLLECT_ARGS))"; \
	  $(GO) run ./cmd/edar-collect -o $(EDAR_TRANSITIONS) $(EDAR_COLLECT_ARGS) 2>&1 | grep -v '^PASS$$\|^ok ' | tee $(EDAR_DOCS)/collect.log || exit 1; \
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

train-collect:
	$(GO) run ./cmd/edar-collect -o $(EDAR_TRANSITIONS) $(EDAR_COLLECT_ARGS)

train-test: train-venv
	cd training/edar && ../../$(EDAR_PY) -m unittest -v test_edar

train-synthetic: train-venv onnxruntime
	rm -rf $(EDAR_SYNTH_DIR)
	go run ./sched/edar/cmd/edar-synth -o $(EDAR_SYNTH_DIR)/transitions -flows 8 -seconds 20
	cd training/edar && ../../$(EDAR_PY) train.py --synthetic --steps 3000 \
	  --transitions $(abspath $(EDAR_SYNTH_DIR))/transitions --out $(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx
	MPQ_EDAR_MODEL=$(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx \
	  go test -count=1 -run 'TestModel|TestParity' -v ./pkg/model/gonet ./pkg/model/ort
