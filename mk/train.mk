# EdAR offline training (training/edar, Python: JAX + optax on CPU).
#
#   make train                      train on $(EDAR_TRANSITIONS) → $(EDAR_MODEL)
#   make train-test                 the trainer's unit tests (reader, export parity)
#   make train-synthetic            prove the pipeline end to end on SYNTHETIC
#                                   transitions (Go writes → Python trains →
#                                   ONNX → Go loads it in gonet and ort, parity)
#
# The virtualenv lives in .venv-train (about 0.9 GB; created on first use).

EDAR_VENV        ?= .venv-train
EDAR_PY          := $(EDAR_VENV)/bin/python
EDAR_TRANSITIONS ?= testdata/edar-transitions/
EDAR_MODEL       ?= testdata/edar.onnx
EDAR_STEPS       ?= 5000
EDAR_TRAIN_ARGS  ?=
EDAR_SYNTH_DIR   ?= training/edar/out/synthetic

$(EDAR_VENV)/.installed: training/edar/requirements.txt
	python3 -m venv $(EDAR_VENV)
	printf '*\n' > $(EDAR_VENV)/.gitignore
	$(EDAR_PY) -m pip install -q -r training/edar/requirements.txt
	touch $@

.PHONY: train train-venv train-synthetic train-test
train-venv: $(EDAR_VENV)/.installed

train: train-venv
	@find $(EDAR_TRANSITIONS) -name '*.edar' 2>/dev/null | grep -q . || { \
	  echo "train: no *.edar transition files under $(EDAR_TRANSITIONS)."; \
	  echo "  Collect them with the session's EdAR data collection, or run"; \
	  echo "  'make train-synthetic' to prove the pipeline on synthetic data."; exit 1; }
	cd training/edar && ../../$(EDAR_PY) train.py --transitions $(abspath $(EDAR_TRANSITIONS)) \
	  --out $(abspath $(EDAR_MODEL)) --steps $(EDAR_STEPS) $(EDAR_TRAIN_ARGS)

train-test: train-venv
	cd training/edar && ../../$(EDAR_PY) -m unittest -v test_edar

train-synthetic: train-venv onnxruntime
	rm -rf $(EDAR_SYNTH_DIR)
	go run ./sched/edar/cmd/edar-synth -o $(EDAR_SYNTH_DIR)/transitions -flows 8 -seconds 20
	cd training/edar && ../../$(EDAR_PY) train.py --synthetic --steps 3000 \
	  --transitions $(abspath $(EDAR_SYNTH_DIR))/transitions --out $(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx
	MPQ_EDAR_MODEL=$(abspath $(EDAR_SYNTH_DIR))/edar-synthetic.onnx \
	  go test -count=1 -run 'TestModel|TestParity' -v ./pkg/model/gonet ./pkg/model/ort
