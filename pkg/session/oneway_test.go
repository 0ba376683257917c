package session

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// A path that dies in one direction only: the server's packets to the
// client on B are lost, while the client's still reach the server on B (on
// Mininet's two-path demo, a client interface that went down: the client's
// packets for that path's connection left by the other interface). The
// packets the server receives on B are no progress of what it sends there.
// RFC 9002 §6.2 counts only acknowledgements ("ack-eliciting packets are
// not acknowledged within the expected period of time"), and the client
// reports B silent (probe.go), so B fails and its data goes over A. The
// download must not stand still for longer than a second, and the server
// must mark B potentially failed. At a444123 the server never failed B,
// and the download stood still until the end of the test's 20 s.
func TestOneWayOutageFailsPath(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbedOn(t, 1, nil, true, emu.PathSpec{Up: failoverA, Down: failoverA}, emu.PathSpec{Up: failoverB, Down: failoverB})
		defer tb.close()
		for len(tb.srv.Paths()) < 2 {
			time.Sleep(time.Millisecond)
		}
		st, err := tb.cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		st.Write([]byte("GET"))
		st.Close()
		peer := accept(t, tb.srv, 5*time.Second)
		const size = 8 << 20 // about 2.2 s over both paths
		go func() { peer.Write(make([]byte, size)); peer.Close() }()
		go func() {
			time.Sleep(time.Second)
			dead := failoverB
			dead.Loss = 1
			if err := tb.topo.Links[1].Update(failoverB, dead); err != nil { // a→b is client→server
				t.Error(err)
			}
		}()
		n, stall, _ := readStalls(st, size, 20*time.Second)
		failures := tb.srv.Stats().PathFailures
		t.Logf("read %d of %d bytes, longest stall %v, server path failures %d", n, size, stall, failures)
		if n < size {
			t.Fatalf("read %d of %d bytes in 20 s", n, size)
		}
		if stall > time.Second {
			t.Errorf("the download stood still for %v, want at most 1 s", stall)
		}
		if failures == 0 {
			t.Error("the server never marked B potentially failed")
		}
	})
}
