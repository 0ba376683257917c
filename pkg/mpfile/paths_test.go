package mpfile

import (
	"strings"
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

// -paths items: an IP, IP:port, [IPv6]:port or an interface name; anything
// else says what is accepted.
func TestResolvePath(t *testing.T) {
	for _, c := range []struct {
		in, want string
	}{
		{"127.0.0.1", "127.0.0.1:0"},
		{" 127.0.0.1:25001 ", "127.0.0.1:25001"},
		{"[::1]:7", "[::1]:7"},
		{"lo", "127.0.0.1:0"},
		{"lo:25002", "127.0.0.1:25002"},
	} {
		a, err := ResolvePath(c.in)
		if err != nil || a.String() != c.want {
			t.Errorf("ResolvePath(%q) = %v, %v; want %s", c.in, a, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"nosuch0":          "is not a local IP address, IP:port or interface name (interfaces here: ",
		"127.0.0.1:99999":  `bad port "99999"`,
		"127.0.0.1:http":   `bad port "http"`,
		"nosuch0:25001":    "interfaces here: ",
		"10.0.0.1.5:25001": "is not a local IP address",
	} {
		if _, err := ResolvePath(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ResolvePath(%q): %v, want an error with %q", in, err, want)
		}
	}
}
