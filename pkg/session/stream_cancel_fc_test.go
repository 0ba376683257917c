package session

import (
	"errors"
	"testing"
)

// uniData sends n bytes on stream id, as STREAM frames of up to 1,200
// bytes.
func (sp *scriptedPeer) uniData(id uint64, n int) {
	for n > 0 {
		k := min(n, 1200)
		sp.data(id, make([]byte, k))
		n -= k
	}
}

// deliverAll cuts everything pending into segments and delivers them; it
// returns the first error.
func (sp *scriptedPeer) deliverAll() error {
	for len(sp.pend) > 0 {
		if err := sp.segment(sp.cut(1200)); err != nil {
			return err
		}
	}
	return nil
}

// Issue 29: "512 KiB + 1 byte on a client unidirectional stream of a
// reserved type is not a flow-control error (RFC 9000 §4.1). The server
// cancels the stream and silently drops the excess." RFC 9000 §4.1: "A
// receiver MUST close the connection with an error of type
// FLOW_CONTROL_ERROR if the sender violates the advertised connection or
// stream data limits". The stream's limit holds after CancelRead: exactly
// the window is accepted and dropped, one byte more is ErrFlowControl (a
// protocol violation, closed with codeFlowControl).
func TestCancelledStreamKeepsFlowControl(t *testing.T) {
	const id = 2 // the client's first unidirectional stream
	for _, extra := range []int{0, 1} {
		sp := newScriptedPeer(t, nil)
		sp.s.mu.Lock()
		sp.s.rcv.limit = DefaultRecvWindow // the connection's window is not what is tested
		sp.s.mu.Unlock()
		sp.uniData(id, 100)
		if err := sp.deliverAll(); err != nil {
			t.Fatal(err)
		}
		sp.s.mu.Lock()
		st := sp.s.streams.acceptLocked(uni)
		sp.s.mu.Unlock()
		if st == nil {
			t.Fatal("no stream to accept")
		}
		st.CancelRead(0x21) // as pkg/h3 does with a reserved stream type (RFC 9114 §6.2.3)
		sp.uniData(id, DefaultStreamWindow-100+extra)
		err := sp.deliverAll()
		switch {
		case extra == 0 && err != nil:
			t.Errorf("exactly the stream's window after CancelRead: %v, want no error", err)
		case extra == 1 && (!errors.Is(err, ErrFlowControl) || !errors.Is(err, ErrProtocol) || codeForErr(err) != codeFlowControl):
			t.Errorf("one byte past the stream's window after CancelRead: err %v (code %d), want ErrFlowControl (code %d)", err, codeForErr(err), codeFlowControl)
		}
		sp.close()
	}
}

// RFC 9000 §3.5: "If the stream is in the 'Recv' or 'Size Known' state, the
// transport SHOULD signal this by sending a STOP_SENDING frame", and the
// receiving part ends when RESET_STREAM (or the FIN) gives its final size.
// Until then the cancelled stream holds its stream credit; the peer's
// RESET_STREAM frees it, and the application keeps its own error.
func TestCancelledStreamFreedByReset(t *testing.T) {
	const id = 2
	sp := newScriptedPeer(t, nil)
	defer sp.close()
	sp.uniData(id, 10)
	if err := sp.deliverAll(); err != nil {
		t.Fatal(err)
	}
	sp.s.mu.Lock()
	st := sp.s.streams.acceptLocked(uni)
	sp.s.mu.Unlock()
	st.CancelRead(0x21)
	sp.s.mu.Lock()
	_, kept := sp.s.streams.byID[id]
	sp.s.mu.Unlock()
	if !kept {
		t.Fatal("the cancelled stream was forgotten before its final size was known")
	}
	sp.reset(id, 0x10c)
	if err := sp.deliverAll(); err != nil {
		t.Fatal(err)
	}
	sp.s.mu.Lock()
	_, kept = sp.s.streams.byID[id]
	sp.s.mu.Unlock()
	if kept {
		t.Error("the cancelled stream is still kept after the peer's RESET_STREAM")
	}
	var se *StreamError
	if _, err := st.Read(make([]byte, 1)); !errors.As(err, &se) || se.ErrorCode != 0x21 || se.Remote {
		t.Errorf("Read after CancelRead and the peer's reset: %v, want this end's StreamError 0x21", err)
	}
}
