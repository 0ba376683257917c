package mpfile

import (
	"testing"

	"github.com/mpqsched/mpqsched/internal/doccheck"
)

// Every exported name of the package has a doc comment, so `go doc` reads
// as a complete API (issue 19: "every exported name documented").
func TestEveryExportedNameDocumented(t *testing.T) { doccheck.Check(t, ".") }
