package h3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Hostile peers (issue 21, item 7): a raw client on a session writes what
// it likes to this package's server. Each case must end in a connection or
// stream error with the right H3 code, no crash, and bounded memory. Run
// inside a synctest bubble.

type rawBed struct {
	topo *emu.Topology
	ln   *session.Listener
	cli  *session.Session
	srv  *Server
	done chan error // ServeConn's result
}

func newRawBed(t testing.TB, srv *Server, wrap func(Conn) Conn) *rawBed {
	t.Helper()
	topo, err := emu.NewTopology(1, twoPaths()[0])
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("mp.test")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &session.Config{MaxStreams: 100}
	ln, err := session.Listen(topo.Server, pair.Server, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cli, err := session.Dial(context.Background(), topo.Clients[0], topo.Server.LocalAddr(), pair.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := &rawBed{topo: topo, ln: ln, cli: cli, srv: srv, done: make(chan error, 1)}
	c := FromSession(s)
	if wrap != nil {
		c = wrap(c)
	}
	go func() { b.done <- srv.ServeConn(c) }()
	return b
}

func (b *rawBed) close() {
	b.cli.CloseWithError(0, "")
	b.srv.Close()
	<-b.done
	b.ln.Close()
	b.topo.Close()
}

// control opens the client's control stream with SETTINGS.
func (b *rawBed) control(t testing.TB) *session.SendStream {
	t.Helper()
	st, err := b.cli.OpenUniStream()
	if err != nil {
		t.Fatal(err)
	}
	st.Write(appendSettings(quicvarint.Append(nil, streamControl), 1<<16))
	return st
}

// wantConnError waits for the server to close the session with code.
func (b *rawBed) wantConnError(t testing.TB, code ErrCode) {
	t.Helper()
	select {
	case <-b.cli.Context().Done():
	case <-time.After(10 * time.Second):
		t.Fatalf("the server did not close the connection (want %v)", code)
	}
	var ae *session.ApplicationError
	if err := b.cli.Err(); !errors.As(err, &ae) || ErrCode(ae.Code) != code || !ae.Remote {
		t.Fatalf("session ended with %v, want the server's %v", err, code)
	}
}

// headersFrame encodes a request's HEADERS frame.
func headersFrame(method, path string, extra ...string) []byte {
	e := newEncoder()
	e.field(":method", method)
	e.field(":scheme", "https")
	e.field(":authority", "mp.test")
	e.field(":path", path)
	for i := 0; i+1 < len(extra); i += 2 {
		e.field(extra[i], extra[i+1])
	}
	return e.frame()
}

// readResponse reads a response's status from a raw stream.
func readResponse(t testing.TB, st io.Reader) (int, error) {
	t.Helper()
	fr := newFrameReader(st)
	lim := &limits{maxHeaderBytes: 1 << 16, maxHeaderCount: 100, headerTimeout: 10 * time.Second}
	fields, err := readHeaders(fr, st.(ReceiveStream), lim, false)
	if err != nil {
		return 0, err
	}
	resp, err := responseFromFields(fields)
	if err != nil {
		return 0, err
	}
	return resp.StatusCode, nil
}

// RFC 9114 §6.2.1: "Receipt of a second stream claiming to be a control
// stream MUST be treated as a connection error of type
// H3_STREAM_CREATION_ERROR."
func TestHostileSecondControlStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler()}, nil)
		defer b.close()
		b.control(t)
		b.control(t)
		b.wantConnError(t, ErrCodeStreamCreationError)
	})
}

// RFC 9114 §6.2.1: "If the first frame of the control stream is any other
// frame type [than SETTINGS], this MUST be treated as a connection error of
// type H3_MISSING_SETTINGS."
func TestHostileMissingSettings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler()}, nil)
		defer b.close()
		st, _ := b.cli.OpenUniStream()
		st.Write(appendFrame(quicvarint.Append(nil, streamControl), frameGoAway, []byte{0}))
		b.wantConnError(t, ErrCodeMissingSettings)
	})
}

// RFC 9114 §4.1: "Receipt of an invalid sequence of frames MUST be treated
// as a connection error of type H3_FRAME_UNEXPECTED"; DATA before HEADERS is
// one.
func TestHostileDataBeforeHeaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler()}, nil)
		defer b.close()
		b.control(t)
		st, err := b.cli.OpenStreamSync(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		st.Write(appendFrame(nil, frameData, []byte("hello")))
		b.wantConnError(t, ErrCodeFrameUnexpected)
	})
}

// Unknown frame and stream types are ignored (RFC 9114 §9: "Implementations
// MUST ignore unknown or unsupported values in all extensible protocol
// elements"): grease before a request does not disturb it.
func TestGreaseIgnored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler()}, nil)
		defer b.close()
		ctl := b.control(t)
		ctl.Write(appendFrame(nil, 0x21, []byte("grease"))) // reserved 0x1f*N+0x21
		g, _ := b.cli.OpenUniStream()
		g.Write(quicvarint.Append(nil, 0x1f*7+0x21))
		g.Write([]byte("ignored"))
		st, _ := b.cli.OpenStreamSync(context.Background())
		req := appendFrame(nil, 0x1f*3+0x21, []byte("x"))
		req = append(req, headersFrame("GET", "/hello")...)
		st.Write(req)
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != 200 {
			t.Fatalf("request after grease: %d, %v", code, err)
		}
	})
}

// A header section past the server's limit (SETTINGS_MAX_FIELD_SECTION_SIZE,
// RFC 9114 §4.2.2) gets 431 without being read: the server holds no more
// than its limit whatever length the frame claims; a section with too many
// fields likewise.
func TestHostileHeaderTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler(), MaxHeaderBytes: 1024, MaxHeaderCount: 20}, nil)
		defer b.close()
		b.control(t)
		// A frame that claims 1 GiB.
		st, _ := b.cli.OpenStreamSync(context.Background())
		st.Write(appendFrameHeader(nil, frameHeaders, 1<<30))
		st.Write(make([]byte, 4096))
		if code, err := readResponse(t, st); err != nil || code != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("1 GiB HEADERS: %d, %v; want 431", code, err)
		}
		// A small frame that decodes past the limit.
		st, _ = b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/hello", "x-big", strings.Repeat("a", 1000)))
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("2000-byte header: %d, %v; want 431", code, err)
		}
		// Too many fields.
		var many []string
		for i := range 30 {
			many = append(many, "x-f"+strconv.Itoa(i), "v")
		}
		st, _ = b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/hello", many...))
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("30 fields: %d, %v; want 431", code, err)
		}
		// The connection still works.
		st, _ = b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/hello"))
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != 200 {
			t.Fatalf("GET after: %d, %v", code, err)
		}
	})
}

// Malformed requests are stream errors H3_MESSAGE_ERROR (RFC 9114 §4.1.2:
// "Malformed requests or responses that are detected MUST be treated as a
// stream error of type H3_MESSAGE_ERROR"), among them a content-length that
// does not match the DATA frames.
func TestHostileMalformedRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newRawBed(t, &Server{Handler: newTestHandler()}, nil)
		defer b.close()
		b.control(t)
		cases := []struct {
			name string
			req  []byte
		}{
			{"content-length too large", append(headersFrame("POST", "/echo", "content-length", "10"), appendFrame(nil, frameData, []byte("abc"))...)},
			{"content-length too small", append(headersFrame("POST", "/echo", "content-length", "2"), appendFrame(nil, frameData, []byte("abc"))...)},
			{"no :path", func() []byte {
				e := newEncoder()
				e.field(":method", "GET")
				e.field(":scheme", "https")
				e.field(":authority", "mp.test")
				return e.frame()
			}()},
			{"pseudo after regular", headersFrame("GET", "/hello", "accept", "*/*", ":protocol", "x")},
			{"authority and host differ", headersFrame("GET", "/hello", "host", "other.test")},
			{"uppercase name", headersFrame("GET", "/hello", "X-Up", "1")},
			{"connection header", headersFrame("GET", "/hello", "connection", "close")},
		}
		for _, tc := range cases {
			st, _ := b.cli.OpenStreamSync(context.Background())
			st.Write(tc.req)
			st.Close()
			_, err := io.ReadAll(st)
			if c, _, ok := streamResetCode(err); !ok || ErrCode(c) != ErrCodeMessageError {
				t.Errorf("%s: read ended with %v, want a reset with H3_MESSAGE_ERROR", tc.name, err)
			}
		}
		if b.cli.Context().Err() != nil {
			t.Fatalf("the connection ended: %v", b.cli.Err())
		}
	})
}

// 10,000 requests each cancelled by the client (RFC 9114 §4.1.1:
// H3_REQUEST_CANCELLED) leave no handler, goroutine or stream behind, and
// the connection still serves.
func TestHostileManyCancelledRequests(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newTestHandler()
		b := newRawBed(t, &Server{Handler: h}, nil)
		defer b.close()
		b.control(t)
		synctest.Wait()
		before := runtime.NumGoroutine()
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		req := headersFrame("GET", "/slow")
		const n = 10000
		for i := range n {
			st, err := b.cli.OpenStreamSync(context.Background())
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			st.Write(req)
			if i%2 == 0 {
				synctest.Wait() // let the handler start on half of them
			}
			st.CancelWrite(uint64(ErrCodeRequestCancelled))
			st.CancelRead(uint64(ErrCodeRequestCancelled))
		}
		time.Sleep(time.Second) // virtual: let the resets arrive
		synctest.Wait()
		if after := runtime.NumGoroutine(); after > before+5 {
			t.Errorf("%d goroutines after %d cancelled requests, %d before", after, n, before)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		if grew := int64(m1.HeapInuse) - int64(m0.HeapInuse); grew > 8<<20 {
			t.Errorf("heap in use grew by %d bytes over %d cancelled requests", grew, n)
		}
		t.Logf("heap in use: %d KiB before, %d KiB after", m0.HeapInuse>>10, m1.HeapInuse>>10)
		cancelled := len(h.cancelled)
		for len(h.cancelled) > 0 {
			<-h.cancelled
		}
		st, _ := b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/hello"))
		st.Close()
		if code, err := readResponse(t, st); err != nil || code != 200 {
			t.Fatalf("GET after %d cancelled requests: %d, %v", n, code, err)
		}
		t.Logf("%d cancelled requests; handlers that saw the cancellation (channel of 16): %d", n, cancelled)
	})
}

// A client that never reads its response: the handler's Write fails after
// the write timeout once the flow-control windows are full, so the server
// holds at most those windows and the handler ends.
func TestHostileNeverReads(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		type result struct {
			n   int64
			err error
			at  time.Duration
		}
		res := make(chan result, 1)
		start := time.Now()
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			chunk := make([]byte, 64<<10)
			var n int64
			for {
				m, err := w.Write(chunk)
				n += int64(m)
				if err != nil {
					res <- result{n, err, time.Since(start)}
					return
				}
			}
		})
		const timeout = 3 * time.Second
		b := newRawBed(t, &Server{Handler: h, WriteTimeout: timeout}, nil)
		defer b.close()
		b.control(t)
		st, _ := b.cli.OpenStreamSync(context.Background())
		st.Write(headersFrame("GET", "/flood"))
		st.Close()
		select {
		case r := <-res:
			if r.n > 32<<20 {
				t.Errorf("the handler wrote %d bytes to a client that reads nothing", r.n)
			}
			if r.at > timeout+2*time.Second {
				t.Errorf("the write failed after %v, want about the write timeout %v", r.at, timeout)
			}
			t.Logf("write failed after %d bytes and %v: %v", r.n, r.at, r.err)
		case <-time.After(time.Minute):
			t.Fatal("the handler's Write never failed")
		}
		// The stream is reset towards the client.
		_, err := io.ReadAll(st)
		if _, _, ok := streamResetCode(err); !ok {
			t.Errorf("client read ended with %v, want a reset", err)
		}
	})
}

// Handlers that ignore their request's context, under a peer that opens and
// resets streams as fast as it can: the stream credit comes back with each
// reset, so only Server.MaxConcurrentRequests bounds the handlers (and their
// goroutines). Before that bound, 10,000 such requests left 5,000
// goroutines behind.
func TestHostileResetsWithStuckHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release })
		const bound = 50
		b := newRawBed(t, &Server{Handler: h, MaxConcurrentRequests: bound}, nil)
		defer b.close()
		b.control(t)
		synctest.Wait()
		before := runtime.NumGoroutine()
		req := headersFrame("GET", "/stuck")
		opened := 0
		for range 2000 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			st, err := b.cli.OpenStreamSync(ctx)
			cancel()
			if err != nil {
				break // no credit left: the server stopped accepting
			}
			opened++
			st.Write(req)
			synctest.Wait()
			st.CancelWrite(uint64(ErrCodeRequestCancelled))
			st.CancelRead(uint64(ErrCodeRequestCancelled))
		}
		synctest.Wait()
		if after := runtime.NumGoroutine(); after > before+bound+10 {
			t.Errorf("%d goroutines after %d reset requests on stuck handlers, %d before; bound %d", after, opened, before, bound)
		}
		close(release)
		time.Sleep(time.Second)
		synctest.Wait()
		if after := runtime.NumGoroutine(); after > before+5 {
			t.Errorf("%d goroutines once the handlers returned, %d before", after, before)
		}
		t.Logf("%d requests opened and reset", opened)
	})
}
