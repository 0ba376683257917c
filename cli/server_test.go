package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// runServer runs serverRun with args until it returns; ctx is already
// cancelled, so a server that starts stops at once (as after SIGINT).
func runServer(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var o, e bytes.Buffer
	code = serverRun(ctx, args, &o, &e)
	return code, o.String(), e.String()
}

// -h prints the help on stdout and exits 0; bad command lines exit 2 with a
// message saying what is wrong.
func TestServerCommandLine(t *testing.T) {
	code, out, _ := runServer(t, "-h")
	for _, want := range []string{"usage: mpquic-server", "-write-timeout", "-request-timeout", "-http-listing", "-edar-model", "-limit-log-interval", "-coupling", "olia", "-reno-friendly"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("-h: exit %d, help lacks %q:\n%s", code, want, out)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-frobnicate"}, "flag provided but not defined: -frobnicate"},
		{[]string{"-dev-cert", dir, "extra"}, `unexpected arguments ["extra"]`},
		{[]string{"-scheduler", "fastest", "-dev-cert", dir}, `unknown scheduler "fastest"`},
		{[]string{"-addr", "127.0.0.1:0"}, "TLS needs -cert and -key, or -dev-cert DIR"},
		{[]string{"-dev-cert", dir, "-cert", "c.pem"}, "either -cert/-key or -dev-cert"},
		{[]string{"-dev-cert", dir, "-dir", filepath.Join(dir, "none")}, "is not a directory"},
		{[]string{"-dev-cert", dir, "-write-timeout", "0s"}, "-write-timeout 0s: want a positive duration"},
		{[]string{"-dev-cert", dir, "-request-timeout", "-1s"}, "-request-timeout -1s"},
		{[]string{"-dev-cert", dir, "-segment-size", "-1"}, "-segment-size -1"},
		{[]string{"-dev-cert", dir, "-edar-model", "m.onnx"}, "-edar-model is for -scheduler edar, not minrtt"},
		{[]string{"-dev-cert", dir, "-coupling", "cubic"}, `-coupling: cc: unknown coupling "cubic" (known: balia, lia, none, olia, reno-friendly)`},
		{[]string{"-dev-cert", dir, "-reno-friendly=maybe"}, `invalid boolean value "maybe" for -reno-friendly`},
	} {
		code, _, stderr := runServer(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "mpquic-server -h") {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	// An unknown scheduler lists the registered ones.
	if _, _, stderr := runServer(t, "-scheduler", "fastest", "-dev-cert", dir); !strings.Contains(stderr, "minrtt") || !strings.Contains(stderr, "redundant") {
		t.Errorf("unknown scheduler: %q lists no schedulers", stderr)
	}
}

// EdAR without a model is refused and told where the shipped one is; with
// the shipped model the server starts; a missing model file is refused.
func TestServerEdarModel(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runServer(t, "-scheduler", "edar", "-dev-cert", dir, "-addr", "127.0.0.1:0")
	if code != exitUsage || !strings.Contains(stderr, "-scheduler edar needs a model: -edar-model FILE; the repository ships one at testdata/edar.onnx") {
		t.Errorf("edar without a model: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runServer(t, "-scheduler", "edar-o", "-dev-cert", dir, "-addr", "127.0.0.1:0", "-edar-model", "testdata/edar.onnx")
	if code != exitUsage || !strings.Contains(stderr, "-scheduler edar -edar-model FILE") {
		t.Errorf("edar-o: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runServer(t, "-scheduler", "edar", "-dev-cert", dir, "-addr", "127.0.0.1:0", "-edar-model", filepath.Join(dir, "none.onnx"))
	if code != exitUsage || !strings.Contains(stderr, "-edar-model "+filepath.Join(dir, "none.onnx")) {
		t.Errorf("missing model: exit %d, stderr %q", code, stderr)
	}
	code, _, stderr = runServer(t, "-scheduler", "edar", "-dev-cert", dir, "-addr", "127.0.0.1:0", "-edar-model", "testdata/edar.onnx")
	if code != exitOK || !strings.Contains(stderr, "EdAR-p model") || !strings.Contains(stderr, "scheduler edar") {
		t.Errorf("edar with the shipped model: exit %d, stderr %q", code, stderr)
	}
}

// -dev-cert makes a certificate once and reuses it on later starts, so a
// client's pinned copy stays good; another -name, or a key that does not
// match, makes a new one.
func TestServerDevCertReused(t *testing.T) {
	dir := t.TempDir()
	start := func(name string) ([]byte, string) {
		t.Helper()
		code, _, stderr := runServer(t, "-addr", "127.0.0.1:0", "-dir", dir, "-dev-cert", dir, "-name", name)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, devCertFile))
		if err != nil {
			t.Fatal(err)
		}
		return b, stderr
	}
	first, log1 := start("localhost")
	if !strings.Contains(log1, "written to") {
		t.Errorf("first start: %s", log1)
	}
	if fi, err := os.Stat(filepath.Join(dir, devKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key.pem: %v, mode %v, want 0600", err, fi.Mode().Perm())
	}
	again, log2 := start("localhost")
	if !bytes.Equal(first, again) || !strings.Contains(log2, "reused") {
		t.Errorf("second start made a new certificate: %s", log2)
	}
	// The reused certificate is the one a client pins.
	if _, err := certs.ClientPinned(filepath.Join(dir, devCertFile), "localhost"); err != nil {
		t.Error(err)
	}
	other, log3 := start("mpq.example")
	if bytes.Equal(first, other) || !strings.Contains(log3, `not for "mpq.example"`) {
		t.Errorf("another -name reused the certificate: %s", log3)
	}
	// A key that does not match the certificate: a new pair.
	stray, _ := certs.SelfSigned("mpq.example")
	os.WriteFile(filepath.Join(dir, devKeyFile), stray.KeyPEM, 0o600)
	if fresh, log4 := start("mpq.example"); bytes.Equal(fresh, other) || !strings.Contains(log4, "do not match") {
		t.Errorf("a mismatched key was accepted: %s", log4)
	}
}

// An expired certificate is replaced.
func TestLoadDevCertExpired(t *testing.T) {
	dir := t.TempDir()
	pair, _ := certs.SelfSigned("localhost") // valid 1990 to 2100
	os.WriteFile(filepath.Join(dir, devCertFile), pair.CertPEM, 0o644)
	os.WriteFile(filepath.Join(dir, devKeyFile), pair.KeyPEM, 0o600)
	cp, kp := filepath.Join(dir, devCertFile), filepath.Join(dir, devKeyFile)
	if p, why := loadDevCert(cp, kp, "localhost", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); p == nil {
		t.Errorf("valid certificate refused: %s", why)
	}
	if p, why := loadDevCert(cp, kp, "localhost", time.Date(2101, 1, 1, 0, 0, 0, 0, time.UTC)); p != nil || why != "the old certificate has expired" {
		t.Errorf("expired certificate: %v %q", p != nil, why)
	}
}
