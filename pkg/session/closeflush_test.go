package session

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/emu"
)

// Issue 30: "The graceful-close wait is a state of it [the lifecycle], ...
// and Write is still accepted during it." Once Close is waiting for what
// was written to be acknowledged, a Write on any stream fails with
// ErrClosed, as quic-go's stream writes fail once its connection is
// closed, and a Write that was blocked for room returns what it queued
// and the same error; what was written before Close is still delivered.
func TestWriteDuringCloseWaitFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
		tb := newTestbedOn(t, 1, nil, false, emu.PathSpec{Up: a, Down: a})
		defer tb.close()
		st, err := tb.cli.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		go func() { // the peer reads whatever comes
			for {
				ps, err := tb.srv.AcceptStream(context.Background())
				if err != nil {
					return
				}
				go io.Copy(io.Discard, ps)
			}
		}()
		blocked := make(chan error, 1)
		go func() { // fills the send buffer and blocks for room
			_, err := st.Write(make([]byte, 8<<20))
			blocked <- err
		}()
		time.Sleep(10 * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- tb.cli.Close() }()
		synctest.Wait() // Close is waiting for acknowledgements
		other, err := tb.cli.OpenStream()
		if err == nil {
			_, err = other.Write([]byte("late"))
		}
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a Write after Close began: %v, want ErrClosed", err)
		}
		select {
		case err := <-blocked:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("the Write blocked for room when Close began returned %v, want ErrClosed", err)
			}
		case <-time.After(time.Second):
			t.Error("the Write blocked for room when Close began still waits 1 s later")
		}
		if err := <-closed; err != nil {
			t.Errorf("Close: %v", err)
		}
	})
}
