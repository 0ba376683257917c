# The reproduction report: runs the experiments of the PRS-MPTCP, LLHD and
# FPRS papers (and fitting scenarios for BLEST, ECF and Peekaboo) in virtual
# time, in two columns: uncoupled (coupling none) and under the coupled
# congestion control each paper ran (LIA where the paper does not say), and
# writes docs/reproduction.md and docs/reproduction/<paper>/<coupling>/.
# About 15-20 minutes on 2 cores (each column about half). Flags:
# make reproduce REPRODUCE_FLAGS='-papers prs' (run one paper, reuse the
# others' results), REPRODUCE_FLAGS='-coupling none' (or paper: run one
# column, reuse the other's results) or REPRODUCE_FLAGS=-no-run (rebuild the
# report only).
REPRODUCE_FLAGS ?=

.PHONY: reproduce
reproduce: build
	$(BIN)/mpquic-bench reproduce -out docs -coupling both $(REPRODUCE_FLAGS)
