// Package reproduce holds the papers' claims as data: each claim names a
// scheduler, the baselines it is compared with, the metric, the claimed
// relative change per baseline (or only its direction) and the scenarios it
// is judged on. The four papers' claims ship in claims/papers.json
// (Papers); a researcher writes their own in the same format and checks
// them with `mpquic-bench reproduce -claims FILE`.
//
// A claims file is a JSON object {"claims": [...]}; unknown fields are
// errors, and every error names the claim and the field.
//
// The package also holds the reproduction itself, which the mpquic-bench
// reproduce command runs and wires to flags:
//
//   - paper.go: Paper, Matrix, the two columns (Columns), the output names
//     and RunLog; jobs.go: Paper.Jobs, a paper's runs in one column
//     (bench.Job);
//   - plan.go: Plan, what runs per paper, and the papers' own tables set
//     beside ours;
//   - judge.go: the verdict rule (VerdictRule) and the comparison of a
//     claim's scheduler with a baseline;
//   - columns.go: the report's two columns (Columns: uncoupled and the
//     papers' coupling), the claims table and the verdicts that change;
//   - report.go: WriteReport, the Markdown report; tables.go its tables,
//     figure.go its claim figures (and Slug, the figures' file-name rule);
//   - own.go: WriteOwn, the page of a researcher's own claims;
//   - resolve.go: Registered, the claims as judged, and each metric's
//     measurement.
package reproduce

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Metrics are the names a claim's metric may take: out-of-order segments
// per run, flow completion time (s), goodput (bits/s), head-of-line blocked
// time (s) and re-sent bytes per run.
var Metrics = []string{"ooo", "fct", "goodput", "hol", "resent"}

// Claim is one statement of a paper, checked against runs.
type Claim struct {
	// Paper is the key of the paper the claim belongs to; the report shows
	// the claim in that paper's section.
	Paper string `json:"paper"`
	// ID names the claim in file names: lower-case letters, digits and
	// '-', unique within a file.
	ID     string `json:"id"`
	Source string `json:"source"` // who claims it, and where
	Text   string `json:"text"`   // the claim, as stated
	// Scheduler is the registered name of the scheduler the claim is about.
	Scheduler string `json:"scheduler"`
	// Baselines are the registered names of the schedulers it is compared
	// with, at least one, none twice, not Scheduler.
	Baselines []string `json:"baselines"`
	// Claimed is, per baseline, the claimed relative change of the metric
	// ((scheduler − baseline) / baseline: −0.38 is 38% less); null when the
	// paper states only the direction. Omitted: only the direction, for
	// every baseline. A direction is "better": lower for ooo, fct, hol and
	// resent, higher for goodput.
	Claimed []*float64 `json:"claimed,omitempty"`
	Metric  string     `json:"metric"` // one of Metrics
	// Scenarios are shell globs (path.Match) of the recorded scenario names
	// the claim is judged on, as results.jsonl names them (".short" for a
	// shortened scenario, "@bytes=10MB" for a variant).
	Scenarios []string `json:"scenarios"`
	Scope     string   `json:"scope,omitempty"` // which scenarios, in words, and whether they are the paper's own
	Own       bool     `json:"own,omitempty"`   // the scenarios are the paper's own experiments
}

// File is the format of a claims file.
type File struct {
	Claims []Claim `json:"claims"` // at least one
}

//go:embed claims/papers.json
var papersJSON []byte

// Papers returns the claims of the four papers reproduced by `make
// reproduce` (claims/papers.json).
func Papers() []Claim {
	cs, err := Parse(papersJSON)
	if err != nil {
		panic("reproduce: claims/papers.json: " + err.Error()) // TestPapersLoad guards it
	}
	return cs
}

// Load reads and checks a claims file; errors name the file, the claim
// and the field.
func Load(path string) ([]Claim, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cs, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// Parse decodes and checks a claims file's contents (see Check).
func Parse(data []byte) ([]Claim, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("claims file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("claims file: more than one JSON value")
	}
	if err := Check(f.Claims); err != nil {
		return nil, err
	}
	return f.Claims, nil
}

var idPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// Check reports the first problem of cs, naming the claim ("claims[2]",
// with its id when it has one) and the field: a required field that is
// empty, an id that is malformed or repeated, a baseline repeated or equal
// to the scheduler, a claimed list whose length is not the baselines', an
// unknown metric, or a malformed scenario glob. It does not check that the
// scheduler names are registered: the caller knows the registry.
func Check(cs []Claim) error {
	if len(cs) == 0 {
		return errors.New("claims: none")
	}
	ids := map[string]bool{}
	for i, c := range cs {
		at := fmt.Sprintf("claims[%d]", i)
		if c.ID != "" {
			at += " (" + c.ID + ")"
		}
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("%s.%s: %s", at, field, fmt.Sprintf(format, args...))
		}
		for _, f := range []struct{ name, v string }{{"paper", c.Paper}, {"id", c.ID}, {"source", c.Source}, {"text", c.Text}, {"scheduler", c.Scheduler}, {"metric", c.Metric}} {
			if strings.TrimSpace(f.v) == "" {
				return bad(f.name, "missing")
			}
		}
		if !idPattern.MatchString(c.ID) {
			return bad("id", "%q: want lower-case letters, digits and '-'", c.ID)
		}
		if ids[c.ID] {
			return bad("id", "%q: used by an earlier claim", c.ID)
		}
		ids[c.ID] = true
		if len(c.Baselines) == 0 {
			return bad("baselines", "missing: name at least one scheduler to compare with")
		}
		for k, b := range c.Baselines {
			switch {
			case strings.TrimSpace(b) == "":
				return bad(fmt.Sprintf("baselines[%d]", k), "empty")
			case b == c.Scheduler:
				return bad(fmt.Sprintf("baselines[%d]", k), "%q is the claim's own scheduler", b)
			case slices.Index(c.Baselines, b) < k:
				return bad(fmt.Sprintf("baselines[%d]", k), "%q is listed twice", b)
			}
		}
		if c.Claimed != nil && len(c.Claimed) != len(c.Baselines) {
			return bad("claimed", "%d values for %d baselines: give one per baseline (null for a direction only), or leave it out", len(c.Claimed), len(c.Baselines))
		}
		for k, v := range c.Claimed {
			if v != nil && (*v <= -1 || *v == 0) {
				return bad(fmt.Sprintf("claimed[%d]", k), "%v: a relative change is above −1 and not 0 (null for a direction only)", *v)
			}
		}
		if !slices.Contains(Metrics, c.Metric) {
			return bad("metric", "%q: want one of %s", c.Metric, strings.Join(Metrics, ", "))
		}
		if len(c.Scenarios) == 0 {
			return bad("scenarios", "missing: give at least one scenario name or glob")
		}
		for k, g := range c.Scenarios {
			if _, err := filepath.Match(g, ""); err != nil || g == "" {
				return bad(fmt.Sprintf("scenarios[%d]", k), "%q is not a glob", g)
			}
		}
	}
	return nil
}

// Match reports whether the recorded scenario name is one the claim is
// judged on.
func (c Claim) Match(name string) bool {
	for _, g := range c.Scenarios {
		if ok, _ := filepath.Match(g, name); ok {
			return true
		}
	}
	return false
}

// ClaimedChange is the claimed relative change against baseline k, and
// false when only the direction is claimed.
func (c Claim) ClaimedChange(k int) (float64, bool) {
	if k >= len(c.Claimed) || c.Claimed[k] == nil {
		return 0, false
	}
	return *c.Claimed[k], true
}
