package mpfile

import (
	"testing"
)

// checkPath is the one rule of FILE and HTTP: no hidden component, no
// "..", no empty component, no backslash or NUL.
func TestCheckPath(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"f", "f", true},
		{"/f", "f", true},
		{"sub/f", "sub/f", true},
		{"/sub/", "sub", true},
		{"/", ".", true},
		{"", ".", true},
		{"a.b", "a.b", true},
		{".hidden-secret", "", false},
		{"/.hidden-secret", "", false},
		{"sub/.git/config", "", false},
		{"..", "", false},
		{"../etc/passwd", "", false},
		{"sub/../../x", "", false},
		{"./f", "", false},
		{"a//b", "", false},
		{"//", "", false},
		{`a\b`, "", false},
		{"a\x00b", "", false},
	} {
		got, err := checkPath(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("checkPath(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
}
