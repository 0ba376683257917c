package all

// EdAR registers as "edar" without a model: redundant for its first TI, then
// normal (minRTT) mode every TI until a Policy is set with SetPolicy (see
// sched/edar). It imports no ML code.
import _ "github.com/mpqsched/mpqsched/sched/edar"
