package cli

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/metrics"
)

// Issue 31: one port for every HTTP/3 client, and a client that falls back
// to plain HTTP/3.

// serverTLSFor is the server side of ts's certificate.
func serverTLSFor(t *testing.T, ts *testServer) *tls.Config {
	t.Helper()
	return ts.pair.Server
}

// startOtherALPN is a QUIC server with ts's certificate that speaks only
// "other/1": neither a session nor HTTP/3.
func startOtherALPN(t *testing.T, ts *testServer) string {
	t.Helper()
	tc := serverTLSFor(t, ts).Clone()
	tc.NextProtos = []string{"other/1"}
	ln, err := quic.ListenAddr("127.0.0.1:0", tc, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String()
}

// mpquic-server's one port: quic-go's HTTP/3 client downloads the file
// there, with the multipath advertisement, and so does a two-path
// mpquic-client.
func TestOnePortServesQuicGoClientAndTwoPaths(t *testing.T) {
	ts := startServer(t)
	port := ts.addr[strings.LastIndex(ts.addr, ":")+1:]
	tlsConf, err := certs.ClientPinned(ts.ca, "")
	if err != nil {
		t.Fatal(err)
	}
	qtr := &http3.Transport{TLSClientConfig: tlsConf}
	defer qtr.Close()
	resp, err := (&http.Client{Transport: qtr, Timeout: 30 * time.Second}).Get("https://localhost:" + port + "/f")
	if err != nil {
		t.Fatalf("quic-go's http3 client on mpquic-server's port: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || !bytes.Equal(b, ts.data) {
		t.Fatalf("quic-go client: %d bytes, %v", len(b), err)
	}
	if got, want := resp.Header.Get("Alt-Svc"), `mpqsched%2F1=":`+port+`"; ma=86400`; got != want {
		t.Errorf("Alt-Svc %q, want %q", got, want)
	}

	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-ca", ts.ca, "-paths", "127.0.0.1,127.0.0.1", "-q", "-v",
		"get", "https://localhost:"+port+"/f", "-o", out)
	if code != exitOK || len(rs) != 1 {
		t.Fatalf("exit %d, %d results, stderr %s", code, len(rs), stderr)
	}
	if r := rs[0]; r.Mode != metrics.ModeMultipath || !r.SHA256OK || len(r.PerPathBytes) != 2 {
		t.Errorf("result mode %q, sha256_ok %v, per-path bytes %v: want multipath over 2 paths", r.Mode, r.SHA256OK, r.PerPathBytes)
	}
	// -v: one line per path, numbered as -paths and -backup count.
	for _, want := range []string{"path 1 (from 127.0.0.1:", "path 2 (from 127.0.0.1:"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// get against a plain HTTP/3 server (quic-go's http3, the server's
// -h3-addr): one handshake offering both ALPNs, the server picks h3, and the
// file comes over that connection, reported as single-path.
func TestGetFallsBackToPlainHTTP3(t *testing.T) {
	ts := startServer(t)
	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-ca", ts.ca, "-paths", "127.0.0.1,127.0.0.1", "-q", "-v", "get", "https://"+ts.h3Addr+"/f", "-o", out)
	if code != exitOK || len(rs) != 1 {
		t.Fatalf("exit %d, %d results, stderr %s", code, len(rs), stderr)
	}
	r := rs[0]
	if r.Mode != metrics.ModeSinglePath || !r.SHA256OK || r.Bytes != uint64(len(ts.data)) || r.Error != "" {
		t.Errorf("result %+v: want single-path, verified, %d bytes", r, len(ts.data))
	}
	if got, _ := os.ReadFile(out); sha256.Sum256(got) != sha256.Sum256(ts.data) {
		t.Error("the file written differs from the served one")
	}
	if !strings.Contains(stderr, "the server chose plain HTTP/3") || !strings.Contains(stderr, "path 2 (from 127.0.0.1:") || !strings.Contains(stderr, "a spare") {
		t.Errorf("-v does not say the mode and the unused path:\n%s", stderr)
	}
}

// A server that sends no Repr-Digest: the file is kept and reported
// unverified; with -require-digest the download fails and the file goes.
func TestGetWithoutDigest(t *testing.T) {
	ts := startServer(t)
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	srv := &http3.Server{Handler: http.FileServer(http.Dir(ts.dir)), TLSConfig: http3.ConfigureTLSConfig(serverTLSFor(t, ts))}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close(); pc.Close() })
	url := "https://" + pc.LocalAddr().String() + "/f"

	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-ca", ts.ca, "get", url, "-o", out)
	if code != exitOK || len(rs) != 1 || !rs[0].Unverified || rs[0].SHA256OK || rs[0].Error != "" {
		t.Fatalf("no digest: exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, ts.data) {
		t.Error("the unverified file was not kept whole")
	}
	if !strings.Contains(stderr, "UNVERIFIED") {
		t.Errorf("the summary does not say unverified:\n%s", stderr)
	}

	out2 := filepath.Join(t.TempDir(), "out2")
	code, rs, _ = runClient(t, "-ca", ts.ca, "-require-digest", "-q", "get", url, "-o", out2)
	if code != exitFail || len(rs) != 1 || !strings.Contains(rs[0].Error, "Repr-Digest") {
		t.Fatalf("-require-digest: exit %d, results %+v", code, rs)
	}
	if _, err := os.Stat(out2); err == nil {
		t.Error("-require-digest kept an unverified file")
	}
}
