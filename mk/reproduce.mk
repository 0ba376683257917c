# The reproduction report: runs the experiments of the PRS-MPTCP, LLHD and
# FPRS papers (and fitting scenarios for BLEST, ECF and Peekaboo) in virtual
# time and writes docs/reproduction.md and docs/reproduction/<paper>/.
# About 10-15 minutes on 2 cores. Flags: make reproduce REPRODUCE_FLAGS='-papers prs'
# (run one paper, reuse the others' results) or REPRODUCE_FLAGS=-no-run (rebuild
# the report only).
REPRODUCE_FLAGS ?=

.PHONY: reproduce
reproduce: build
	$(BIN)/mpquic-bench reproduce -out docs $(REPRODUCE_FLAGS)
