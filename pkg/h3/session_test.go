package h3

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// sessionBed is this package's server and client over a two-path session on
// the emulator; build it inside a synctest bubble.
type sessionBed struct {
	topo   *emu.Topology
	ln     *session.Listener
	srv    *Server
	tr     *Transport
	dialed chan *session.Session // every session the client dialled
}

// twoPaths: a Wi-Fi-like and an LTE-like path.
func twoPaths() []emu.PathSpec {
	a := emu.LinkConfig{RateBps: 100e6, Delay: 5 * time.Millisecond}
	b := emu.LinkConfig{RateBps: 50e6, Delay: 15 * time.Millisecond}
	return []emu.PathSpec{{Up: a, Down: a}, {Up: b, Down: b}}
}

func newSessionBed(t testing.TB, h http.Handler, srv *Server, cfg *session.Config) *sessionBed {
	t.Helper()
	topo, err := emu.NewTopology(1, twoPaths()...)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("mp.test")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(topo.Server, pair.Server, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if srv == nil {
		srv = &Server{}
	}
	srv.Handler = h
	go srv.Serve(SessionListener(ln))
	b := &sessionBed{topo: topo, ln: ln, srv: srv, dialed: make(chan *session.Session, 16)}
	b.tr = &Transport{Dial: func(ctx context.Context, authority string) (Conn, error) {
		s, err := session.Dial(ctx, topo.Clients[0], topo.Server.LocalAddr(), pair.Client, cfg)
		if err != nil {
			return nil, err
		}
		if _, err := s.AddPath(ctx, topo.Clients[1], topo.Server.LocalAddr(), session.PathOptions{}); err != nil {
			s.Close()
			return nil, err
		}
		b.dialed <- s
		return FromSession(s), nil
	}}
	return b
}

// close ends everything so that the bubble's goroutines exit.
func (b *sessionBed) close() {
	b.tr.CloseIdleConnections()
	b.srv.Close()
	b.ln.Close()
	for {
		select {
		case s := <-b.dialed:
			s.CloseWithError(0, "")
			continue
		default:
		}
		break
	}
	b.topo.Close()
}

// The interop matrix's cases between this package's client and server over
// a two-path multipath session on the emulator, in virtual time. Both paths
// must carry data.
func TestMatrixOverSession(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newTestHandler()
		b := newSessionBed(t, h, nil, nil)
		defer b.close()
		e := &testEnv{client: &http.Client{Transport: b.tr}, base: "https://mp.test", handler: h,
			shutdown: b.srv.Shutdown, ourClient: true}
		var first *session.Session
		for _, tc := range matrix {
			start := time.Now()
			tc.run(t, e)
			if first == nil {
				first = <-b.dialed
			}
			if tc.name != "GOAWAY" && len(b.dialed) != 0 {
				// One session per authority, reused across requests.
				t.Fatalf("after %s: %d more sessions dialled, want the first reused", tc.name, len(b.dialed))
			}
			t.Logf("%s: ok in %v of virtual time", tc.name, time.Since(start))
			if tc.name == "10MB" {
				st := first.Stats()
				if len(st.Paths) != 2 {
					t.Fatalf("%d paths, want 2", len(st.Paths))
				}
				for _, p := range st.Paths {
					if p.BytesSent < 1<<20 {
						t.Errorf("path %v sent %d bytes: both paths must carry the 10 MB transfers", p.ID, p.BytesSent)
					}
				}
			}
		}
	})
}
