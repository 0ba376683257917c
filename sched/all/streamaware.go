package all

import _ "github.com/mpqsched/mpqsched/sched/streamaware"
