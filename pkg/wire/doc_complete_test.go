package wire

import (
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/internal/doccheck"
)

// Every exported name of the package has a doc comment, so `go doc` reads
// as a complete API (issue 19: "every exported name documented").
func TestEveryExportedNameDocumented(t *testing.T) {
	missing, err := doccheck.Undocumented(".")
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("%d exported names without a doc comment:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
