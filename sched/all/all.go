// Package all registers every scheduler that ships with mpqsched. Import it
// for its side effect: _ "github.com/mpqsched/mpqsched/sched/all".
// Each scheduler's import lives in its own file here.
package all

import (
	_ "github.com/mpqsched/mpqsched/sched/minrtt"
	_ "github.com/mpqsched/mpqsched/sched/redundant"
	_ "github.com/mpqsched/mpqsched/sched/roundrobin"
)
