package h3

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go/quicvarint"
)

// prioConn wraps a Conn so that its accepted streams have the priority
// hook, recording what they are told.
type prioConn struct {
	Conn
	mu  sync.Mutex
	got map[uint64][]Priority
}

type prioStream struct {
	Stream
	c *prioConn
}

func (s prioStream) SetPriority(u uint8, inc bool) {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	s.c.got[s.ID()] = append(s.c.got[s.ID()], Priority{u, inc})
}

func (c *prioConn) AcceptStream(ctx context.Context) (Stream, error) {
	st, err := c.Conn.AcceptStream(ctx)
	if err != nil {
		return nil, err
	}
	return prioStream{st, c}, nil
}

func (c *prioConn) seen(id uint64) []Priority {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Priority(nil), c.got[id]...)
}

// The priority header (RFC 9218 §5) and PRIORITY_UPDATE frames (§7) reach
// the stream's SetPriority hook.
func TestPriorityHook(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pc *prioConn
		entered := make(chan struct{}, 1)
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/wait" {
				entered <- struct{}{}
				<-release
			}
			w.Write([]byte("ok"))
		})
		b := newRawBed(t, &Server{Handler: h}, func(c Conn) Conn {
			pc = &prioConn{Conn: c, got: make(map[uint64][]Priority)}
			return pc
		})
		defer b.close()
		ctl := b.control(t)

		// §5: "The priority header field ... signal[s] priority".
		st, _ := b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/a", "priority", "u=1, i"))
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != 200 {
			t.Fatalf("GET: %d %v", code, err)
		}
		if got := pc.seen(st.ID()); len(got) != 1 || got[0] != (Priority{1, true}) {
			t.Fatalf("priority header u=1, i: hook saw %v", got)
		}
		// No header: RFC 9218 §4: "u=3" and "i=?0" are the defaults, set
		// on the stream (a session stream starts incremental).
		st, _ = b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/b"))
		st.Close()
		readResponse(t, st)
		if got := pc.seen(st.ID()); len(got) != 1 || got[0] != (Priority{3, false}) {
			t.Fatalf("no priority header: hook saw %v, want the defaults {3 false}", got)
		}
		// §7: PRIORITY_UPDATE "reprioritize[s] a request" in flight.
		st, _ = b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/wait"))
		st.Close()
		<-entered
		ctl.Write(appendFrame(nil, framePriorityUpdate, append(quicvarint.Append(nil, st.ID()), "u=6"...)))
		time.Sleep(100 * time.Millisecond) // virtual: a few RTTs for the frame to arrive
		close(release)
		readResponse(t, st)
		if got := pc.seen(st.ID()); len(got) != 2 || got[0] != (Priority{3, false}) || got[1] != (Priority{6, false}) {
			t.Fatalf("PRIORITY_UPDATE u=6: hook saw %v, want the defaults then {6 false}", got)
		}
		// §7.1: an update naming a stream that is not a client-initiated
		// bidirectional one is H3_ID_ERROR.
		ctl.Write(appendFrame(nil, framePriorityUpdate, append(quicvarint.Append(nil, 2), "u=6"...)))
		b.wantConnError(t, ErrCodeIDError)
	})
}
