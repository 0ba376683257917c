package h3

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// A scripted server on a session: it sends SETTINGS, reads each request's
// header and answers with the bytes respond gives. This package's Transport
// is the client. Run inside a synctest bubble.
type scriptedServer struct {
	topo *emu.Topology
	ln   *session.Listener
	tr   *Transport
	cli  chan *session.Session
	srv  chan *session.Session
}

func newScriptedServer(t testing.TB, tr *Transport, respond func(path string) []byte) *scriptedServer {
	t.Helper()
	p := twoPaths()[0]
	topo, err := emu.NewTopology(1, p, p, p, p) // a socket for each dial: a closed session closes its own
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("mp.test")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(topo.Server, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &scriptedServer{topo: topo, ln: ln, tr: tr, cli: make(chan *session.Session, 4), srv: make(chan *session.Session, 4)}
	go func() {
		for {
			s, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			b.srv <- s
			ctl, _ := s.OpenUniStream()
			ctl.Write(appendSettings(quicvarint.Append(nil, streamControl), 1<<16))
			go func() {
				for {
					st, err := s.AcceptStream(s.Context())
					if err != nil {
						return
					}
					go func() {
						fields, err := readHeaders(newFrameReader(st), st, &limits{maxHeaderBytes: 1 << 16, maxHeaderCount: 100, headerTimeout: time.Minute}, true)
						if err != nil {
							return
						}
						req, err := requestFromFields(fields)
						if err != nil {
							return
						}
						if out := respond(req.URL.Path); out != nil {
							st.Write(out)
							st.Close()
						}
					}()
				}
			}()
		}
	}()
	dials := 0
	tr.Dial = func(ctx context.Context, authority string) (Conn, error) {
		dials++
		s, err := session.Dial(ctx, topo.Clients[dials-1], topo.Server.LocalAddr(), pair.Client, nil)
		if err != nil {
			return nil, err
		}
		b.cli <- s
		return FromSession(s), nil
	}
	return b
}

func (b *scriptedServer) close() {
	b.tr.CloseIdleConnections()
	b.ln.Close()
	for _, ch := range []chan *session.Session{b.cli, b.srv} {
		for len(ch) > 0 {
			(<-ch).CloseWithError(0, "")
		}
	}
	b.topo.Close()
}

func responseHeaders(status string, kv ...string) []byte {
	e := newEncoder()
	e.field(":status", status)
	for i := 0; i+1 < len(kv); i += 2 {
		e.field(kv[i], kv[i+1])
	}
	return e.frame()
}

// The client's side of the protocol's errors (RFC 9114 §4.1, §4.1.2,
// §7.2.5) and of its limits.
func TestClientHostileServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &Transport{MaxResponseHeaderBytes: 1024, ResponseHeaderTimeout: 2 * time.Second}
		b := newScriptedServer(t, tr, func(path string) []byte {
			switch path {
			case "/interim":
				// §4.1: "interim responses" (1xx) may precede the final one.
				return append(append(responseHeaders("103", "link", "</a>"), responseHeaders("200")...), appendFrame(nil, frameData, []byte("ok"))...)
			case "/short":
				return append(responseHeaders("200", "content-length", "10"), appendFrame(nil, frameData, []byte("abc"))...)
			case "/bigheader":
				return responseHeaders("200", "x-big", strings.Repeat("b", 2000))
			case "/silent":
				return nil
			case "/grease":
				return append(append(appendFrame(nil, 0x21, []byte("g")), responseHeaders("200")...), appendFrame(nil, 0x1f*2+0x21, nil)...)
			case "/push":
				return appendFrame(nil, framePushPromise, []byte{0, 0, 0})
			case "/data-first":
				return appendFrame(nil, frameData, []byte("x"))
			}
			return responseHeaders("404")
		})
		defer b.close()
		c := &http.Client{Transport: tr}
		get := func(path string) (*http.Response, []byte, error) {
			resp, err := c.Get("https://mp.test" + path)
			if err != nil {
				return nil, nil, err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			return resp, body, err
		}
		if resp, body, err := get("/interim"); err != nil || resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("/interim: %v %q %v", resp, body, err)
		}
		if resp, _, err := get("/grease"); err != nil || resp.StatusCode != 200 {
			t.Fatalf("/grease: %v %v", resp, err)
		}
		// §4.1.2: a content-length that does not match is malformed:
		// H3_MESSAGE_ERROR.
		if _, _, err := get("/short"); !errors.Is(err, &Error{Code: ErrCodeMessageError, Stream: true}) {
			t.Errorf("/short: %v, want a stream error H3_MESSAGE_ERROR", err)
		}
		if _, _, err := get("/bigheader"); !errors.Is(err, errHeaderTooLarge) {
			t.Errorf("/bigheader: %v, want the header limit", err)
		}
		start := time.Now()
		if _, _, err := get("/silent"); err == nil || time.Since(start) > 3*time.Second {
			t.Errorf("/silent: %v after %v, want a timeout after 2 s", err, time.Since(start))
		}
		// A connection error closes the connection; the next request dials
		// again.
		if _, _, err := get("/data-first"); !errors.Is(err, &Error{Code: ErrCodeFrameUnexpected}) {
			t.Errorf("/data-first: %v, want connection error H3_FRAME_UNEXPECTED", err)
		}
		// §7.2.5: a push ID beyond MAX_PUSH_ID (never sent) is H3_ID_ERROR.
		if _, _, err := get("/push"); !errors.Is(err, &Error{Code: ErrCodeIDError}) {
			t.Errorf("/push: %v, want connection error H3_ID_ERROR", err)
		}
		if resp, _, err := get("/other"); err != nil || resp.StatusCode != 404 {
			t.Fatalf("/other: %v %v", resp, err)
		}
	})
}
