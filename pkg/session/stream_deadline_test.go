package session

import (
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// armed reports which of st's deadline timers are pending.
func armed(st *Stream) (read, write bool) {
	st.s.mu.Lock()
	defer st.s.mu.Unlock()
	return st.recv.timer != nil, st.send.timer != nil
}

// Issue 30, "Server memory under load": a pending deadline timer holds its
// whole session (the timer's function locks the session), so an ended
// session whose streams had deadlines stayed reachable until they fired.
// pkg/h3 sets a 30 s write deadline before each response write and 10 s
// ones on its control stream, which lives as long as its session: at
// a8db118 mpquic-server kept every ended session for up to 30 s (a 20 MB
// download's client and server sessions held about 0.75 MiB together).
// No timer may stay armed on a stream of an ended session, nor on a stream
// the session has forgotten (both sides done), whoever sets the deadline
// and when.
func TestDeadlineTimersEndWithSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tb := newTestbed(t, 1, nil)
		defer tb.close()
		far := time.Now().Add(time.Hour)

		// A stream done both ways is forgotten; a deadline set on it later
		// arms nothing.
		c1, _ := tb.cli.OpenStream()
		c1.Write([]byte("request"))
		c1.Close()
		s1 := accept(t, tb.srv, time.Second)
		s1.SetDeadline(far)
		if r, w := armed(s1); !r || !w {
			t.Fatalf("open stream: deadline timers armed read %v, write %v; want both", r, w)
		}
		io.ReadAll(s1)
		s1.Write([]byte("response"))
		s1.Close()
		io.ReadAll(c1)
		time.Sleep(time.Second) // the response's acknowledgement
		tb.srv.mu.Lock()
		forgotten := s1.forgotten
		tb.srv.mu.Unlock()
		if !forgotten {
			t.Fatal("the server still keeps a stream done both ways")
		}
		if r, w := armed(s1); r || w {
			t.Errorf("forgotten stream: deadline timers armed read %v, write %v; want none", r, w)
		}
		s1.SetDeadline(far)
		if r, w := armed(s1); r || w {
			t.Errorf("deadline set on a forgotten stream: timers armed read %v, write %v; want none", r, w)
		}

		// A stream still open when the session ends (pkg/h3's control
		// streams): its timers stop with the session.
		c2, _ := tb.cli.OpenStream()
		c2.Write([]byte("x"))
		s2 := accept(t, tb.srv, time.Second)
		s2.SetDeadline(far)
		tb.cli.CloseWithError(0, "")
		<-tb.srv.Context().Done()
		if r, w := armed(s2); r || w {
			t.Errorf("stream of an ended session: deadline timers armed read %v, write %v; want none", r, w)
		}
		s2.SetDeadline(far)
		if r, w := armed(s2); r || w {
			t.Errorf("deadline set after the session ended: timers armed read %v, write %v; want none", r, w)
		}
	})
}
