# mpqsched — the two commands a newcomer needs:
#   make bench   the main job: every scheduler on three scenarios of the built-in emulator, 20 seeds (no root, no pip, 1-1½ minutes on 2 cores), with a report
#   make test    every test (fetches what the tests need first)
SHELL := /bin/bash
GO    ?= go
BIN   := bin
export GOFLAGS ?= -buildvcs=false

# Optional pieces (onnxruntime, training, network namespaces) add their own
# targets, and their own prerequisites of `test` through TEST_DEPS.
TEST_DEPS :=
.DEFAULT_GOAL := all
-include mk/*.mk
# EdAR's model runs in onnxruntime when the library is there or can be
# fetched (pip), else in pure Go with the same decisions (a one-line note):
# the main job never needs pip.
BENCH_DEPS := $(if $(wildcard mk/onnxruntime.mk),onnxruntime-optional)

.PHONY: bench-workloads all build bench test test-race test-short test-examples vet fuzz bench-go clean help docs-results
all: build

help:
	@sed -n 's/^#   //p' Makefile

build:
	$(GO) build -o $(BIN)/ ./cmd/...

# The main job: every registered scheduler on scenario.BenchMatrix (the
# default hetero-2path, where schedulers that keep both paths busy tie, and
# two where their rules matter: a small receive buffer over paths of very
# different RTTs, and a Wi-Fi handoff), virtual time, leaving
# results/default/results.md. pkg/scenario's tests check this list.
# 20 seeds, chosen from the measured noise: on rtt10x-256k, the scenario
# where schedulers differ, the smallest goodput difference the report's
# tie test (Welch, Holm over 78 pairs) can declare was 2.86 Mbit/s with 10
# seeds (15% of the scenario's median goodput) and 1.52 Mbit/s with 20 (8%).
# -repeat 4 runs seed 1 four more times, so that the report shows how much
# one seed varies from run to run (about as much as the seeds differ).
BENCH_SCENARIOS := hetero-2path,rtt10x-256k,wifi-handoff
BENCH_MATRIX    := -scenarios $(BENCH_SCENARIOS) -seeds 20 -repeat 4
BENCH_FLAGS ?=
bench: build $(BENCH_DEPS)
	$(BIN)/mpquic-bench run $(BENCH_MATRIX) -out results/default $(BENCH_FLAGS)

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# Every test, end-to-end transfers included (they run in virtual time), then
# the session's packages again under the race detector, and the link
# checks' Python unit tests.
test: $(TEST_DEPS) vet test-examples net-unit test-gym
	$(GO) test -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory test-race

# The concurrent packages under the race detector. -short drops the long
# transfers (100,000 streams, 50 MB per scheduler): the randomised stream
# model, the cancellations, the limits and the HTTP-at-scale tests still run.
# scripts/race.sh runs a few tests per process and works around a crash of
# Go 1.26's race detector inside synctest bubbles (golang/go#78156).
test-race:
	GO=$(GO) scripts/race.sh ./pkg/session/ ./pkg/mpfile/ ./pkg/pathmgr/
	$(GO) test -count=1 -tags lockcount -run 'TestLockOpsPerSegment|TestCopiesPerByte|TestReadWithoutSessionLock' ./pkg/session/

# The example module (its own go.mod): a user's scheduler in a bench binary.
test-examples:
	cd examples/own-scheduler && $(GO) vet ./... && $(GO) test -count=1 ./...

test-short: vet
	$(GO) test -count=1 -short ./...

# A short run of every fuzz target (make fuzz FUZZTIME=5m for longer).
FUZZTIME ?= 15s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test $$pkg -run XXX -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5s || exit 1; \
	  done; done

# Go benchmarks (decision cost, loopback throughput, emulator cost).
bench-go:
	$(GO) test -run XXX -bench . -benchmem ./sched/... ./pkg/session/ ./pkg/emu/

clean:
	rm -rf $(BIN) results/default

# docs/results.md: the committed run of the main job (same matrix as `make bench`).
docs-results: build $(BENCH_DEPS)
	$(BIN)/mpquic-bench run $(BENCH_MATRIX) -out docs -q
	rm -rf docs/edar-online # EdAR-o's working state, not a result

# The workloads of issue 22: video, web (the HTTP Archive's median page over
# HTTP/3 with Chrome's priorities) and rpc (requests beside a bulk download),
# each on hetero-2path's, edar-handoff's and a lossy LTE drive's paths (web
# also on rtt10x's): minRTT, XLINK, SA-ECF, ECF, BLEST, redundant and EdAR on
# the multipath scenarios, minRTT on their single-path baselines, 10 seeds,
# virtual time; rewrites docs/workloads/ (results.jsonl, summary.csv, plots,
# results.md). EdAR runs as minRTT (edar-minrtt-fallback) when its model
# cannot be used. A run that fails is counted in the report (runs (failed)).
WORKLOAD_MULTI      := video-hetero,video-handoff,video-lte,web-hetero,web-handoff,web-lte,web-rtt10x,rpc-hetero,rpc-handoff,rpc-lte
WORKLOAD_BASELINES  := video-*-only,web-*-only,rpc-*-only
WORKLOAD_SCHEDULERS := minrtt,xlink,streamaware,ecf,blest,redundant,edar
WORKLOAD_OUT        ?= docs/workloads
bench-workloads: build $(BENCH_DEPS)
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BIN)/mpquic-bench run -scenarios $(WORKLOAD_MULTI) -schedulers $(WORKLOAD_SCHEDULERS) -seeds 10 -edar-fallback -no-report -q -out "$$tmp/multi" || echo "bench-workloads: some runs failed; the report counts them"; \
	$(BIN)/mpquic-bench run -scenarios '$(WORKLOAD_BASELINES)' -schedulers minrtt -seeds 10 -no-report -q -out "$$tmp/base" || echo "bench-workloads: some runs failed; the report counts them"; \
	mkdir -p $(WORKLOAD_OUT); rm -rf $(WORKLOAD_OUT)/plots $(WORKLOAD_OUT)/matrix.json; \
	cat "$$tmp/multi/results.jsonl" "$$tmp/base/results.jsonl" > $(WORKLOAD_OUT)/results.jsonl; \
	$(BIN)/mpquic-bench report $(WORKLOAD_OUT)
