package cli

import (
	"fmt"
	"net"
	"path"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// stdoutName is the -o value that writes the file to standard output (the
// JSON result line then goes to stderr).
const stdoutName = "-"

// localName is the local file name for a download of target when -o is not
// given: the last element of the URL path, or index.html for a directory
// ("/", "docs/"), never a name that is a directory.
func localName(target string) string {
	if strings.HasSuffix(target, "/") || target == "" {
		return "index.html"
	}
	switch b := path.Base(path.Clean("/" + target)); b {
	case "/", ".", "..":
		return "index.html"
	default:
		return b
	}
}

// checkAddr refuses an address flag that is not HOST:PORT, naming the flag
// (net's own "missing port in address" does not say which).
func checkAddr(flag, v string) error {
	if v == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		return fmt.Errorf("%s %q: want HOST:PORT, such as 127.0.0.1:4433 (%v)", flag, v, err)
	}
	return nil
}

// errorHint is advice for a download error that a user's flags usually
// cause, or "".
func errorHint(msg string) string {
	switch {
	case strings.Contains(msg, "no application protocol"):
		return "hint: the server speaks neither multipath QUIC (ALPN mpqsched/1) nor HTTP/3 (h3) on that port"
	case strings.Contains(msg, "certificate signed by unknown authority"), strings.Contains(msg, "x509:"):
		return "hint: -ca must be the server's certificate: mpquic-server -dev-cert DIR writes it to DIR/cert.pem"
	}
	return ""
}

// pathCount is the summary's "N paths": a path is a local address, so a
// path joined again after an outage (a new connection, a new session path
// number, the same socket) is counted once, and the connections are named
// only when there were more.
func pathCount(st session.Stats) string {
	local := map[string]bool{}
	for _, p := range st.Paths {
		k := fmt.Sprint(p.ID)
		if p.LocalAddr != nil {
			k = p.LocalAddr.String()
		}
		local[k] = true
	}
	n := len(local)
	s := fmt.Sprintf("%d paths", n)
	if n == 1 {
		s = "1 path"
	}
	if len(st.Paths) > n {
		s += fmt.Sprintf(" (%d connections: a path joined again after an outage)", len(st.Paths))
	}
	return s
}
