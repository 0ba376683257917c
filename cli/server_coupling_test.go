package cli

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// safeBuffer is a bytes.Buffer that the server goroutine writes while the
// test reads it.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freeUDPAddr returns a loopback UDP address nobody listens on.
func freeUDPAddr(t *testing.T) string {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	return addr
}

// mpquic-server -coupling olia -reno-friendly serves a verified two-path
// download to mpquic-client -coupling lia, and says which coupling its
// sessions run; the server's sessions are the download's sender.
func TestServerCoupling(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("coupled "), 256<<10) // 2 MiB
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeUDPAddr(t)
	ctx, cancel := context.WithCancel(context.Background())
	var srvErr safeBuffer
	done := make(chan int, 1)
	go func() {
		done <- serverRun(ctx, []string{"-addr", addr, "-dir", dir, "-dev-cert", dir, "-coupling", "olia", "-reno-friendly"}, io.Discard, &srvErr)
	}()
	defer func() {
		cancel()
		if code := <-done; code != exitOK {
			t.Errorf("server exit %d: %s", code, srvErr.String())
		}
	}()
	const want = "coupling olia, reno-friendly true"
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(srvErr.String(), want); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("server log lacks %q: %s", want, srvErr.String())
		}
	}
	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-addr", addr, "-ca", filepath.Join(dir, devCertFile), "-paths", "127.0.0.1,127.0.0.1",
		"-coupling", "lia", "-reno-friendly", "get", "f", "-o", out)
	if code != exitOK || len(rs) != 1 || !rs[0].SHA256OK || rs[0].Bytes != uint64(len(data)) {
		t.Fatalf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Error("output file differs")
	}
}

// The session reads Config.RenoFriendly only when Config.Coupling is
// empty: -reno-friendly with the default -coupling none must still reach
// it, as the rule "reno-friendly".
func TestSessionCoupling(t *testing.T) {
	for _, c := range []struct {
		name string
		rf   bool
		want string
	}{
		{"none", false, "none"},
		{"none", true, "reno-friendly"},
		{"", true, "reno-friendly"},
		{"olia", true, "olia"},
		{"lia", false, "lia"},
		{"reno-friendly", false, "reno-friendly"},
	} {
		if got := sessionCoupling(c.name, c.rf); got != c.want {
			t.Errorf("sessionCoupling(%q, %v) = %q, want %q", c.name, c.rf, got, c.want)
		}
	}
}
