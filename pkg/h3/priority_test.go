package h3

import "testing"

// TestParsePriority checks the priority header's grammar (RFC 9218 §4).
func TestParsePriority(t *testing.T) {
	tests := []struct {
		in   string
		want Priority
	}{
		// §4.1: "The default urgency value is 3"; §4.2: incremental
		// "default value ... is false".
		{"", Priority{3, false}},
		{"u=0", Priority{0, false}},
		{"u=7, i", Priority{7, true}},
		{"i", Priority{3, true}},
		{"i=?1", Priority{3, true}},
		{"i=?0", Priority{3, false}},
		{"u=5;foo=1, i;bar", Priority{5, true}},
		// §4: "Unknown parameters ... MUST be ignored"; out-of-range or
		// malformed values leave the default.
		{"u=8", Priority{3, false}},
		{"u=-1", Priority{3, false}},
		{"u=12", Priority{3, false}},
		{"u=x, i=maybe", Priority{3, false}},
		{"x=1,y, u=1", Priority{1, false}},
		{"u=2,u=6", Priority{6, false}},
		{" u=1 ,  i ", Priority{1, true}},
		{",,,", Priority{3, false}},
	}
	for _, tc := range tests {
		if got := ParsePriority(tc.in, DefaultPriority); got != tc.want {
			t.Errorf("ParsePriority(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// A PRIORITY_UPDATE carries a whole Priority Field Value (RFC 9218 §7):
// parameters it leaves out take their defaults, not the stream's earlier
// values.
func TestParsePriorityUpdateDefaults(t *testing.T) {
	if got := ParsePriority("i", DefaultPriority); got != (Priority{3, true}) {
		t.Fatalf("got %+v", got)
	}
}
