package main

import (
	"testing"

	repro "github.com/mpqsched/mpqsched/pkg/reproduce"
)

// claims.json, the example's own claims (`go run ./cmd/bench reproduce
// -claims claims.json`), is a valid claims file about lowestloss.
func TestClaimsFileLoads(t *testing.T) {
	cs, err := repro.Load("../../claims.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs {
		if c.Scheduler != "lowestloss" {
			t.Errorf("claim %s is about %q, want lowestloss", c.ID, c.Scheduler)
		}
	}
}
