package pathmgr

import (
	"strings"
	"testing"
)

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
