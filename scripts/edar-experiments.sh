# The EdAR experiments, sourced (from the repository root) by
# scripts/edar-eval.sh and training/edar/evaluate.sh: each experiment's
# mpquic-bench scenario flags, with sizes shrunk for the CPU budget
# (docs/edar.md says how), and the experiment family whose EdAR-o model it
# runs (the stable runs use the handoff family's).
# shellcheck disable=SC2034 # used by the scripts that source this file
declare -A FLAGS=(
	[handoff]="-scenarios edar-handoff"
	[stable]="-scenario-file docs/edar/scenarios/edar-handoff-stable.json"
	[settings]="-scenarios edar-setting-* -max-bytes 5000000"
	[fig10]="-scenarios edar-fig10-delay -max-bytes 4000000"
	[fig11]="-scenarios edar-fig11-loss -max-bytes 4000000"
)
declare -A FAMILY=([handoff]=handoff [stable]=handoff [settings]=settings [fig10]=fig10 [fig11]=fig11)
