package onnx

import (
	"testing"

	"github.com/mpqsched/mpqsched/internal/doccheck"
)

// Every exported name of the package has a doc comment, so `go doc` reads
// as a complete API.
func TestEveryExportedNameDocumented(t *testing.T) { doccheck.Check(t, ".") }
