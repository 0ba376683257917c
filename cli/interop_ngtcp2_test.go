package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Issue 31: "Debian's ngtcp2 client ... download[s] a file with correct
// bytes" on mpquic-server's multipath port. gtlsclient (package
// ngtcp2-client; .ci/run installs it) offers ALPN h3 only, so before issue
// 31 the port refused it with CRYPTO_ERROR 0x178 (no_application_protocol).
// It exits 0 even when the connection fails, so the test checks the file.
func TestNgtcp2ClientOnOnePort(t *testing.T) {
	bin, err := exec.LookPath("gtlsclient")
	if err != nil {
		t.Skip("gtlsclient not found: install the Debian package ngtcp2-client (apt-get install -y ngtcp2-client) to run this interop test")
	}
	ts := startServer(t)
	host, port := splitAddr(t, ts.addr)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-q", "--exit-on-all-streams-close", "--handshake-timeout=5s", "--timeout=10s",
		"--download="+dir, host, port, "https://localhost:"+port+"/f")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gtlsclient: %v\n%s", err, out)
	}
	got, err := os.ReadFile(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatalf("gtlsclient downloaded nothing (%v); its output:\n%s", err, out)
	}
	if !bytes.Equal(got, ts.data) {
		t.Fatalf("gtlsclient: %d bytes, want the %d served", len(got), len(ts.data))
	}
}

// splitAddr splits "host:port".
func splitAddr(t *testing.T, addr string) (string, string) {
	t.Helper()
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		t.Fatalf("address %q has no port", addr)
	}
	return addr[:i], addr[i+1:]
}
