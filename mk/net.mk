# Real-network emulation targets (network namespaces, Mininet, kernel MPTCP).
# Include from a top-level Makefile, or run alone:
#   make -f mk/net.mk net-deps | net-bins | net-unit | netns-test | netns-compare | mininet-demo | netns-clean
# Everything but net-bins and net-unit needs root.

# Remember the default goal: an included fragment must not become `make`'s
# default (restored at the end of this file).
_NET_PREV_GOAL := $(.DEFAULT_GOAL)

NET_BIN      ?= $(CURDIR)/bin
NET_PYTHON   ?= /usr/bin/python3
NET_APT_PKGS ?= iproute2 iptables iputils-ping ethtool util-linux kmod mininet bridge-utils iperf3 mptcpd python3 tcpdump

.PHONY: net-deps net-bins net-unit netns-test netns-compare fairness-matrix mininet-demo netns-clean

# Installs only what is missing; does nothing when all are present.
net-deps:
	@missing=""; for p in $(NET_APT_PKGS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "net-deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "net-deps: all present"; fi

net-bins:
	go build -o $(NET_BIN)/ ./cmd/mpq-delayd ./cmd/mpq-netns ./cmd/mptcp-baseline ./cmd/mpquic-server ./cmd/mpquic-client

# Unit tests of the Mininet scripts' pure parts (the link check's judge):
# stdlib only, no root, no Mininet. The Go twin is in pkg/netem.
NET_UNIT_PYTHON ?= python3
net-unit:
	$(NET_UNIT_PYTHON) -m unittest discover -s mininet -p 'test_*.py'

# The root CI test: 2-path topology (20 Mbit/s/10 ms, 10 Mbit/s/30 ms, lossless
# and 0.5% loss), RTT/rate check, 20 MB over kernel MPTCP (reno) and over
# multipath QUIC (minRTT, redundant), a download losing path 2 midway, path 1
# down for 10 s beside kernel MPTCP (TestOutageRecoveryVsMPTCP), interfaces
# that come and go under mpquic-client -paths auto (TestAutoPaths), and the
# link checks' loudness (TestVerifyLoud), and issue 12's shared bottleneck
# (TestSharedBottleneckFairness: TCP reno, kernel MPTCP and the session
# none/olia/olia+reno-friendly against a TCP reno flow, about 6 min), and
# issue 23's TestFairnessCI (TCP reno and the session with olia +
# reno-friendly on 1 and 2 paths, 6 runs each at the 2.5-BDP queue, about
# 4 min; regression guards, not the issue's target: docs/coupling.md). The
# test builds its own copies of the binaries; net-bins also puts them in
# $(NET_BIN) for manual runs.
netns-test: net-deps net-bins
	MPQ_NETNS=1 go test -count=1 -v -timeout 25m ./test/netns/

# The closing-note figure: every scheduler, then the best one against kernel
# MPTCP (3 alternating runs each), lossless and 0.5% loss.
netns-compare: net-deps net-bins
	MPQ_NETNS=1 go test -count=1 -v -timeout 30m -run Compare ./test/netns/

# Issue 23's fairness matrix (root, about 2 h on 2 cores): TCP reno, plain
# quic-go, kernel MPTCP and the session in each coupling mode, each against
# one TCP reno competitor, over start order x queue (0.5, 1, 2.5 BDP) x RTT
# (1x, 3x the competitor's) x scheduling class (normal on a quiet machine,
# real-time) x paths (1, 2), 4 runs per cell, with each flow's loss,
# window reductions, slow start, bursts and ACK frequency. It writes
# $(FAIR_OUT)/report.md (the tables of docs/coupling.md) and runs.jsonl.
# MPQ_FAIR_QUEUES, _RTTS, _CLASSES, _PATHS, _FLOWS, _MODES, _RUNS narrow or
# widen it (MPQ_FAIR_RTTS=mixed: the issue's 20+60 ms pair of paths;
# test/netns/fair_matrix_test.go).
FAIR_OUT ?= $(CURDIR)/results/fairness-matrix
fairness-matrix: net-deps net-bins
	MPQ_NETNS=1 MPQ_FAIR_MATRIX=1 MPQ_FAIR_OUT=$(FAIR_OUT) go test -count=1 -v -timeout 5h -run 'TestFairnessMatrix$$' ./test/netns/

# Mininet: the two-path topology with a handoff (path 2 down at 4 s, up at
# 8 s) and LLHD scenario #1 through its router chains, kernel MPTCP payload.
mininet-demo: net-deps net-bins
	$(NET_PYTHON) mininet/two_path.py --bin-dir $(NET_BIN) --schedule 4:down:2,8:up:2 --size 41943040 --payload both
	$(NET_PYTHON) mininet/llhd.py --scenario-id s1 --bin-dir $(NET_BIN)

# Tears down an mpq-netns topology left behind (prefixes mpq, mpqci and the
# fairness matrix's mpqf with its three extra namespaces).
netns-clean: net-bins
	$(NET_BIN)/mpq-netns down -prefix mpq
	$(NET_BIN)/mpq-netns down -prefix mpqci
	$(NET_BIN)/mpq-netns down -prefix mpqf
	for n in mpqf-split mpqf-bn mpqf-comp; do ip netns del $$n 2>/dev/null || true; done

.DEFAULT_GOAL := $(_NET_PREV_GOAL)
