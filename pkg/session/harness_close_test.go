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

// How a session ends, as its peer sees it (RFC 9000 §10): the close on
// every path, its code, and when it comes.

// Issue 10, item 4: idle sessions were kept forever (a client's keep-alive
// keeps the paths up). RFC 9000 §10.1: "If a max_idle_timeout is specified
// by either endpoint in its transport parameters (Section 18.2), the
// connection is silently closed and its state is discarded when it remains
// idle for longer than the minimum of the max_idle_timeout value advertised
// by both endpoints."
// The session's IdleTimeout (no stream open, nothing in flight) is not
// silent: the peer gets codeIdleTimeout, so that it learns why. A Listener's
// session that served one request is closed IdleTimeout after the last
// activity, not before. (Moved from limits_test.go's TestIdleTimeout onto
// the harness: it now checks the close the peer receives.)
func TestIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 20 * time.Second
		const delay = 5 * time.Millisecond
		// quic-go's own idle timeout (30 s by default) must not come first.
		tc := newTestSession(t, &Config{IdleTimeout: idle}, harnessLink(delay))
		tc.writeFrames(0, dataFrame{ID: 0, Data: "ping"}, finFrame{ID: 0})
		st, err := tc.s.AcceptStream(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(st)
		st.Write([]byte("pong"))
		st.Close()
		tc.wantRecord("the response", 0, dataFrame{ID: 0, Data: "pong"})
		tc.wantRecord("its FIN", 0, finFrame{ID: 0})
		tc.ackAll(0)
		last := time.Now()
		tc.advance(idle - time.Second)
		for _, f := range tc.drain(0) {
			if _, ok := f.(ackFrame); !ok {
				t.Errorf("before the idle timeout: %v", f)
			}
		}
		tc.advance(2 * time.Second)
		tc.wantClose("idle for IdleTimeout: the peer learns why", 0, uint64(codeIdleTimeout))
		select {
		case <-tc.s.Done():
		default:
			t.Fatal("the session has not ended")
		}
		// The session's last activity is the peer's Ack, one one-way
		// delay after it left the peer.
		if el := time.Since(last); el < idle || el > idle+time.Second+10*delay {
			t.Errorf("closed %v after the last activity, want %v", el, idle)
		}
		if err := tc.s.Err(); !errors.Is(err, ErrIdleTimeout) {
			t.Errorf("session error %v, want ErrIdleTimeout", err)
		}
		tc.wantIdle("nothing after the close")
	})
}

// RFC 9000 §10.1, as above: a connection is idle only when nothing happens;
// the session's idle timer does not run while a stream is open. A stream
// the peer opened and the application holds open keeps the session up for
// twice IdleTimeout, with nothing sent.
func TestHarnessNoIdleCloseWithOpenStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 2 * time.Second
		tc := newTestSession(t, &Config{IdleTimeout: idle})
		tc.writeFrames(0, dataFrame{ID: 0, Data: "held open"})
		if _, err := tc.s.AcceptStream(context.Background()); err != nil {
			t.Fatal(err)
		}
		tc.wantAck("the data is acknowledged", 0, 1)
		tc.wantIdle("a stream open for 2.5 × IdleTimeout: no close")
		if err := tc.s.Err(); err != nil {
			t.Errorf("session ended: %v", err)
		}
	})
}

// "A session whose acknowledgements stop progressing while data is
// outstanding is closed after a configurable timeout." RFC 9002 §6.2.4:
// "When a PTO timer expires, a sender MUST send at least one ack-eliciting
// packet in the packet number space as a probe." and the session's bound
// on that (Config.AckTimeout): data outstanding with no acknowledgement
// progress this long ends the session. The peer never acknowledges: the
// session asks (AckReq), and AckTimeout after the data went out closes with
// codeAckTimeout, not before. (Moved from limits_test.go, where it drove
// timeoutsLocked with an injected clock, onto the harness.)
func TestAckTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 4 * time.Second
		tc := newTestSession(t, &Config{AckTimeout: timeout})
		st, err := tc.s.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		sent := time.Now()
		st.Write([]byte("unacknowledged"))
		tc.wantRecord("the data", 0, dataFrame{ID: st.ID(), Data: "unacknowledged"})
		asks := 0
		for {
			f, _ := tc.readFrame(0)
			if f == nil && time.Since(sent) < 2*timeout {
				continue // the AckReqs back off beyond harnessWait
			}
			if _, ok := f.(ackReqFrame); ok {
				asks++
				continue
			}
			if c, ok := f.(closeFrame); !ok || c.Code != uint64(codeAckTimeout) {
				t.Fatalf("got %v, want AckReqs and then a close with codeAckTimeout", f)
			}
			break
		}
		if asks == 0 {
			t.Error("no AckReq before the timeout")
		}
		// The close reaches the peer one one-way delay (5 ms) after it
		// left, AckTimeout after the data did.
		if el := time.Since(sent); el < timeout || el > timeout+20*time.Millisecond {
			t.Errorf("closed %v after the data was sent, want AckTimeout (%v) and a one-way delay", el, timeout)
		}
		if err := tc.s.Err(); !errors.Is(err, ErrAckTimeout) {
			t.Errorf("session error %v, want ErrAckTimeout", err)
		}
	})
}

// RFC 9000 §10.2: "An endpoint sends a CONNECTION_CLOSE frame (Section
// 19.19) to terminate the connection immediately." The session's Close is
// graceful first: it sends its data and the FIN, waits until the peer has
// acknowledged them (asking with AckReqs), and only then sends the close on
// every path: the clean code, with how many of the peer's segments it
// received in order ("closed; received N", closeerr.go).
func TestHarnessGracefulCloseWaitsForAcks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond), harnessLink(10*time.Millisecond))
		closed := closeAfterResponse(t, tc)
		for p, fs := range tc.collect(time.Second) {
			for _, f := range fs {
				switch f.(type) {
				case segmentFrame, dataFrame, finFrame, ackReqFrame:
				default:
					t.Errorf("path %d: before the peer's Ack: %v", p, f)
				}
			}
		}
		select {
		case err := <-closed:
			t.Fatalf("Close returned %v before the peer acknowledged", err)
		default:
		}
		tc.ackAll(0)
		want := closeFrame{Code: uint64(codeNoError), Reason: cleanCloseReason(1)}
		for p := range tc.paths {
			if c := tc.wantClose("acknowledged: the clean close, on every path", p, 0); c != want {
				t.Errorf("path %d: %v, want %v", p, c, want)
			}
		}
		if err := <-closed; err != nil {
			t.Errorf("Close: %v, want nil (everything acknowledged)", err)
		}
		tc.wantIdle("nothing after the close")
	})
}

// RFC 9000 §10.2.1: "An endpoint SHOULD limit the rate at which it
// generates packets in the closing state." A second CloseWithError, with
// another code, sends nothing: the peer sees the first close only.
func TestHarnessSecondCloseSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		tc.s.CloseWithError(1, "first")
		tc.s.CloseWithError(2, "second")
		tc.wantFrame("the first close", 0, closeFrame{Code: uint64(codeApplication), Reason: appCloseReason(&ApplicationError{Code: 1, Reason: "first"})})
		tc.wantIdle("one close")
		var ae *ApplicationError
		if err := tc.s.Err(); !errors.As(err, &ae) || ae.Code != 1 {
			t.Errorf("session error %v, want the first close (code 1)", err)
		}
	})
}

// RFC 9000 §10.2.1: "An endpoint in the closing state sends a packet
// containing a CONNECTION_CLOSE frame in response to any incoming packet
// that it attributes to the connection." The session's close is lost (its
// direction of the link drops everything); once the link is back, within
// the drain period (lifecycle.go: three PTOs, at least minDrain), the
// peer's next packet draws the same close again.
func TestHarnessCloseRepeatedWhileClosing(t *testing.T) {
	for _, side := range harnessSides {
		t.Run(side.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tc := side.new(t, nil)
				link := emu.LinkConfig{RateBps: 50e6, Delay: 5 * time.Millisecond}
				lossy := link
				lossy.Loss = 1
				// Direction a→b is the client's: the session's when it dials.
				up, down := link, lossy
				if tc.dial {
					up, down = lossy, link
				}
				if err := tc.paths[0].link.Update(up, down); err != nil {
					t.Fatal(err)
				}
				tc.s.CloseWithError(3, "bye")
				tc.advance(30 * time.Millisecond) // within the drain period (minDrain: 100 ms)
				if fs := tc.drain(0); len(fs) > 0 {
					t.Fatalf("the peer got %v through a link that drops everything", fs)
				}
				if err := tc.paths[0].link.Update(link, link); err != nil {
					t.Fatal(err)
				}
				tc.writeFrames(0, pingFrame{})
				tc.wantFrame("the peer's packet draws the close again", 0, closeFrame{Code: uint64(codeApplication), Reason: appCloseReason(&ApplicationError{Code: 3, Reason: "bye"})})
				tc.wantIdle("nothing after the close")
			})
		})
	}
}

// RFC 9000 §10.1: "An endpoint restarts its idle timer when a packet from
// its peer is received and processed successfully." The peer's
// application datagrams, one every 1.5 s for 6 s, keep a session with an
// IdleTimeout of 2 s (and no stream) open; once they stop, it closes about
// 2 s after the last one.
func TestHarnessIdleTimerRestartsOnPeerDatagrams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = 2 * time.Second
		tc := newTestSession(t, &Config{IdleTimeout: idle})
		var last time.Time
		for k := range 4 {
			tc.writeFrames(0, appDatagramFrame{Seq: uint64(k), Data: "alive"})
			last = time.Now()
			tc.advance(1500 * time.Millisecond)
			if fs := tc.drain(0); len(fs) > 0 {
				t.Fatalf("after datagram %d: %v, want nothing (the session is active)", k, fs)
			}
		}
		tc.wantClose("the datagrams stop: the idle timeout", 0, uint64(codeIdleTimeout))
		if el := time.Since(last); el < idle || el > idle+100*time.Millisecond {
			t.Errorf("closed %v after the last datagram left the peer, want about %v", el, idle)
		}
	})
}

// RFC 9000 §10.1.2: "An endpoint might need to send ack-eliciting packets
// to avoid an idle timeout if it is expecting response data but does not
// have or is unable to send application data." A Listener's session
// expects nothing: it sends no keep-alive, so over 20 s of quiet not one
// packet of it reaches the peer (a Dial side's do:
// TestHarnessDialKeepAliveSendsNoFrames).
func TestHarnessListenSideSendsNoKeepAlive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil)
		before := tc.packetsFromSession(0)
		tc.advance(20 * time.Second)
		if n := tc.packetsFromSession(0) - before; n != 0 {
			t.Errorf("20 s of quiet: the Listener's session sent %d packets, want none", n)
		}
		tc.wantIdle("and no frame")
	})
}

// Issue 30: "The graceful-close wait is a state of it [the lifecycle], ...
// and Write is still accepted during it." What the wire shows: once Close
// waits for the peer's acknowledgements, a Write on a new stream fails
// with ErrClosed and none of its bytes, nor its stream, reach the peer;
// after the peer acknowledges what came before Close, the session sends
// its close and nothing else. TestWriteDuringCloseWaitFails checks the
// Write's results over a real transfer.
func TestHarnessWriteDuringCloseWaitSendsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tc := newTestSession(t, nil, harnessLink(5*time.Millisecond))
		closed := closeAfterResponse(t, tc)
		synctest.Wait() // Close waits for the peer's acknowledgements
		late, err := tc.s.OpenStream()
		if err == nil {
			_, err = late.Write([]byte("late"))
		}
		if !errors.Is(err, ErrClosed) {
			t.Errorf("a Write after Close began: %v, want ErrClosed", err)
		}
		for p, fs := range tc.collect(500 * time.Millisecond) {
			for _, f := range fs {
				switch f := f.(type) {
				case dataFrame:
					if f.ID != 0 {
						t.Errorf("path %d: %v: data of a stream opened after Close began", p, f)
					}
				case finFrame:
					if f.ID != 0 {
						t.Errorf("path %d: %v: a stream opened after Close began", p, f)
					}
				case segmentFrame, ackReqFrame:
				default:
					t.Errorf("path %d: before the peer's Ack: %v", p, f)
				}
			}
		}
		tc.ackAll(0)
		tc.wantClose("acknowledged: the close", 0, 0)
		if err := <-closed; err != nil {
			t.Errorf("Close: %v, want nil (everything acknowledged)", err)
		}
		tc.wantIdle("nothing after the close")
	})
}

// closeAfterResponse has the peer send a request on stream 0, which the
// session accepts, acknowledges and answers with "response" and its FIN;
// then it starts the session's Close, whose result the channel returns.
func closeAfterResponse(t *testing.T, tc *testSession) <-chan error {
	t.Helper()
	st := acceptRequest(t, tc)
	st.Write([]byte("response"))
	st.Close()
	closed := make(chan error, 1)
	go func() { closed <- tc.s.Close() }()
	return closed
}

// acceptRequest has the peer send a request on stream 0, which the session
// accepts and acknowledges, and returns the stream.
func acceptRequest(t *testing.T, tc *testSession) *Stream {
	t.Helper()
	tc.writeFrames(0, dataFrame{ID: 0, Data: "request"})
	st, err := tc.s.AcceptStream(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tc.wantAck("the request", 0, 1)
	return st
}

// Close waits "as long as acknowledgements keep coming": without an Ack
// for CloseTimeout it gives up, reports the bytes never acknowledged and
// closes; an Ack that acknowledges nothing new does not count as
// progress, one that does restarts the wait.
func TestHarnessCloseTimesOutWithoutProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 2 * time.Second
		tc := newTestSession(t, &Config{CloseTimeout: timeout}, harnessLink(5*time.Millisecond))
		st := acceptRequest(t, tc)
		st.Write([]byte("first"))
		tc.wantRecord("the first part of the response", 0, dataFrame{ID: 0, Data: "first"})
		tc.mu.Lock()
		firstPart := tc.nextSeg // acknowledges the segments seen so far: the first part's
		tc.mu.Unlock()
		st.Write([]byte("second"))
		st.Close()
		start := time.Now()
		closed := make(chan error, 1)
		go func() { closed <- tc.s.Close() }()
		tc.advance(timeout / 2)
		tc.writeFrames(0, ackFrame{Cum: firstPart}) // the first part only: progress at timeout/2
		var err2 error
		select {
		case err2 = <-closed:
		case <-time.After(3 * timeout):
			t.Fatal("Close did not return")
		}
		el := time.Since(start)
		if !errors.Is(err2, errCloseTimedOut) {
			t.Fatalf("Close: %v, want the close timeout", err2)
		}
		// The Ack came at timeout/2 (plus its one-way delay): the wait ran
		// from there.
		if lo, hi := timeout/2+timeout, timeout/2+timeout+20*time.Millisecond; el < lo || el > hi {
			t.Errorf("Close returned after %v, want %v-%v (CloseTimeout after the last progress)", el, lo, hi)
		}
	})
}
