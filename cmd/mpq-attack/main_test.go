package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// Bad command lines and targets off this host exit 2 before anything is
// sent.
func TestCommandLine(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "no attack given"},
		{[]string{"overlap", "-sessions", "0", "-ca", "x"}, "-sessions 0"},
		{[]string{"overlap", "-duration", "2m", "-ca", "x"}, "-duration 2m0s"},
		{[]string{"ackreq", "-holes", "4095", "-ca", "x"}, "-holes 4095"},
		{[]string{"ackreq", "-rate", "-1", "-ca", "x"}, "-rate -1"},
		{[]string{"initials", "-count", "100001", "-ca", "x"}, "-count and -garbage"},
		{[]string{"window"}, "-ca FILE is needed"},
		{[]string{"window", "-inproc", "/tmp"}, "-inproc is for initials"},
		{[]string{"frobnicate", "-ca", "x"}, "-ca: "}, // the certificate is read before the attack is looked up
		{[]string{"overlap", "extra"}, "unexpected arguments"},
		{[]string{"h3-cancel", "-requests", "0", "-ca", "x"}, "-requests 0"},
	} {
		var out, errb bytes.Buffer
		if code := run(c.args, &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, code, errb.String(), c.want)
		}
	}
}

// A target off this host is refused, whatever the attack.
func TestNotLoopback(t *testing.T) {
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(ca, pair.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, a := range []string{"overlap", "ackreq", "wideack", "window", "idle", "joins", "initials", "h3-second-control", "h3-data-first", "h3-big-headers", "h3-cancel"} {
		var out, errb bytes.Buffer
		if code := run([]string{a, "-addr", "192.0.2.1:4433", "-ca", ca}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "loopback") || out.Len() > 0 {
			t.Errorf("%s against 192.0.2.1: exit %d, stderr %q", a, code, errb.String())
		}
	}
}
