package reproduce

// What a paper is to the reproduction: its matrices, its section of the
// report, its two columns, and the output names and run log of its runs.

import (
	"encoding/json"
	"os"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// Output names of the reproduction, relative to its output directory (the
// reproduce command's -out).
const (
	ReportFile = "reproduction.md" // the report
	// ResultsDir holds one directory per paper and coupling,
	// ResultsDir/<paper>/<coupling>/, with results.jsonl and its report.
	ResultsDir = "reproduction"
	RunLogFile = "run.json" // RunLog: per paper and coupling, and for a whole run in ResultsDir
	ClaimsDir  = "claims"   // per paper and coupling: the claim figures, <claim id>.png
)

// Matrix is one scheduler × scenario × seed matrix of a paper, in the terms
// of `mpquic-bench run`'s flags; Paper.Jobs expands it exactly as run
// expands those flags.
type Matrix struct {
	Scenarios  string        // -scenarios: comma-separated names or globs
	Schedulers []string      // -schedulers
	MaxBytes   int64         // -max-bytes, bytes (0 = as in the scenario)
	MaxDur     time.Duration // -max-duration (0 = as in the scenario)
	// DropShrunk leaves out the sweep variants that -max-bytes would shrink,
	// so that a sweep over sizes keeps its small sizes exactly instead of
	// turning its large ones into copies of the cap.
	DropShrunk bool
}

// Paper is one section of the report and one results directory.
type Paper struct {
	Key      string   // directory name under reproduction/
	Title    string   // section title
	Source   string   // where the paper's text is
	Setup    []string // the paper's setup, quoted
	Ours     string   // how we ran it (Markdown)
	Matrices []Matrix // what runs, each once per column
	Figures  []string // "<kind>_<scenario>" report figures embedded in the doc
	Reasons  string   // likely reasons for differences, shown when a claim is not "agree"
	// Extra, if set, writes (as Markdown) a side-by-side of the paper's own numbers and
	// ours, from the results of one column run under coupling.
	Extra func(rs []metrics.Result, timed map[string]bool, coupling string) string
	// Coupling is the coupled congestion control the paper ran (a cc rule
	// name other than none): the report's second column. Where the paper
	// does not say (CouplingSaid false), it is LIA, RFC 6356's coupled
	// increase.
	Coupling     string
	CouplingSaid bool // the paper's text names Coupling
	// CouplingQuotes are the paper's sentences about its congestion control
	// or its stack, verbatim from text; none when the text is not here.
	CouplingQuotes []string
	Text           string // the paper's text under shared/papers, "" if not there
}

// The report's columns: each paper's experiments run once per column.
const (
	ColNone  = "none"  // uncoupled: quic-go's NewReno on every path alone
	ColPaper = "paper" // the coupling the paper ran (Paper.Coupling)
)

// Columns are the report's columns, in order.
var Columns = []string{ColNone, ColPaper}

// CouplingOf is the coupling p runs under in column col, which also names
// the column's results directory, reproduction/<paper>/<coupling>/.
func (p Paper) CouplingOf(col string) string {
	if col == ColPaper {
		return p.Coupling
	}
	return "none"
}

// RunLog is what RunLogFile records about one paper's matrix in one
// column, or (in ResultsDir) about a whole run.
type RunLog struct {
	Finished string  `json:"finished"` // RFC 3339, UTC
	Coupling string  `json:"coupling"` // the column's coupling; "both" for the whole run
	WallSec  float64 `json:"wall_s"`   // wall-clock time of the runs, s
	Runs     int     `json:"runs"`     // runs recorded
	Failed   int     `json:"failed"`   // runs with an error or a SHA-256 mismatch
	Seeds    int     `json:"seeds"`    // seeds per scheduler and scenario
	Parallel int     `json:"parallel"` // runs at once
	CPUs     int     `json:"cpus"`     // runtime.NumCPU of the machine
	Go       string  `json:"go"`       // runtime.Version
}

// Write writes l to path as indented JSON.
func (l RunLog) Write(path string) error {
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
