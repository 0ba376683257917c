# The training environment (python/mpqgym over cmd/mpq-gym; docs/gym.md).
#
#   make gym        build bin/mpq-gym (the Python package builds it too, in a checkout)
#   make test-gym   the environment's pytest suite (a part of `make test`; about 10 s)
#   make gym-speed  steps/s per core and the wall time of a 100 s episode (a report)
#
# The virtualenv lives in .venv-gym (gymnasium, numpy, pytest, onnx; about
# 120 MB; created on first use).

GYM_VENV ?= .venv-gym
GYM_PY   := $(GYM_VENV)/bin/python

$(GYM_VENV)/.installed: python/mpqgym/requirements-test.txt python/mpqgym/pyproject.toml
	python3 -m venv $(GYM_VENV)
	printf '*\n' > $(GYM_VENV)/.gitignore
	$(GYM_PY) -m pip install -q -r python/mpqgym/requirements-test.txt
	$(GYM_PY) -m pip install -q -e python/mpqgym
	touch $@

.PHONY: gym gym-venv test-gym gym-speed
gym:
	$(GO) build -o $(BIN)/ ./cmd/mpq-gym

gym-venv: $(GYM_VENV)/.installed

test-gym: gym-venv gym
	MPQ_GYM_BIN=$(abspath $(BIN))/mpq-gym $(GYM_PY) -m pytest -q -p no:cacheprovider python/mpqgym/tests

gym-speed: gym-venv gym
	MPQ_GYM_BIN=$(abspath $(BIN))/mpq-gym $(GYM_PY) python/mpqgym/speed.py
