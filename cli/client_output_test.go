package cli

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Issue 20, item 5: "http-get / fails with open /: is a directory: the local
// file is named after the URL path". Without -o, a directory's page is
// saved as index.html.
func TestHTTPGetRootLocalName(t *testing.T) {
	ts := startServer(t)
	t.Chdir(t.TempDir())
	code, rs, stderr := runClient(t, "-addr", ts.addr, "-ca", ts.ca, "-q", "http-get", "/")
	if code != exitOK || len(rs) != 1 || !rs[0].SHA256OK {
		t.Fatalf("http-get /: exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	if b, err := os.ReadFile("index.html"); err != nil || string(b) != "<h1>mpquic</h1>\n" {
		t.Errorf("index.html: %q, %v", b, err)
	}
	for target, want := range map[string]string{"/": "index.html", "": "index.html", "docs/": "index.html", "/a/b.txt": "b.txt", "f": "f", "/..": "index.html"} {
		if got := localName(target); got != want {
			t.Errorf("localName(%q) = %q, want %q", target, got, want)
		}
	}
}

// Issue 20, item 5: "-o - writes a file named - instead of standard output."
// The file goes to stdout, the JSON result to stderr.
func TestOutputToStdout(t *testing.T) {
	ts := startServer(t)
	t.Chdir(t.TempDir())
	var stdout, stderr bytes.Buffer
	code := clientRun(context.Background(), []string{"-addr", ts.addr, "-ca", ts.ca, "-q", "get", "f", "-o", "-"}, &stdout, &stderr)
	if code != exitOK || !bytes.Equal(stdout.Bytes(), ts.data) {
		t.Errorf("exit %d, stdout %d bytes, want the file's %d; stderr %s", code, stdout.Len(), len(ts.data), stderr.String())
	}
	if !strings.Contains(stderr.String(), `"sha256_ok":true`) {
		t.Errorf("stderr %q lacks the JSON result", stderr.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error("a file named - was written")
	}
}

// Issue 20, item 5: "-addr 127.0.0.1 says missing port in address without
// naming -addr"; "Dialling the HTTP/3 port gives tls: no application
// protocol, with no hint about -h3-addr"; "A wrong -ca gives x509:
// certificate signed by unknown authority, with no hint about -dev-cert
// DIR/cert.pem."
func TestClientHints(t *testing.T) {
	code, _, stderr := runClient(t, "-addr", "127.0.0.1", "-ca", "x.pem", "get", "f")
	if code != exitUsage || !strings.Contains(stderr, `-addr "127.0.0.1": want HOST:PORT`) {
		t.Errorf("-addr without a port: exit %d, stderr %q", code, stderr)
	}
	ts := startServer(t)
	// Since issue 31 the client falls back to plain HTTP/3 there
	// (TestGetFallsBackToPlainHTTP3); a port that speaks neither protocol
	// gets the hint.
	other := startOtherALPN(t, ts)
	code, _, stderr = runClient(t, "-addr", other, "-ca", ts.ca, "-connect-timeout", "2s", "-q", "get", "f", "-o", os.DevNull)
	if code != exitFail || !strings.Contains(stderr, "no application protocol") || !strings.Contains(stderr, "neither multipath QUIC") {
		t.Errorf("-addr at a port of another protocol: exit %d, stderr %q lacks the hint", code, stderr)
	}
	otherCert, _ := certs.SelfSigned("localhost")
	ca := filepath.Join(t.TempDir(), "other.pem")
	os.WriteFile(ca, otherCert.CertPEM, 0o644)
	code, _, stderr = runClient(t, "-addr", ts.addr, "-ca", ca, "-q", "get", "f", "-o", os.DevNull)
	if code != exitFail || !strings.Contains(stderr, "-dev-cert DIR writes it to DIR/cert.pem") {
		t.Errorf("wrong -ca: exit %d, stderr %q lacks the -dev-cert hint", code, stderr)
	}
}

// Issue 31: "A rejoined path gets a new number, so a 2-path download ends
// 'over 3 paths'". A path is a local address.
func TestPathCountAfterRejoin(t *testing.T) {
	a := &net.UDPAddr{IP: net.IPv4(10, 10, 1, 2), Port: 1000}
	b := &net.UDPAddr{IP: net.IPv4(10, 10, 2, 2), Port: 2000}
	for _, tc := range []struct {
		paths []session.PathStats
		want  string
	}{
		{[]session.PathStats{{ID: 0, LocalAddr: a}}, "1 path"},
		{[]session.PathStats{{ID: 0, LocalAddr: a}, {ID: 1, LocalAddr: b}}, "2 paths"},
		{[]session.PathStats{{ID: 0, LocalAddr: a}, {ID: 1, LocalAddr: b}, {ID: 2, LocalAddr: b}}, "2 paths (3 connections: a path joined again after an outage)"},
	} {
		if got := pathCount(session.Stats{Paths: tc.paths}); got != tc.want {
			t.Errorf("pathCount(%d paths) = %q, want %q", len(tc.paths), got, tc.want)
		}
	}
}
