package h3

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// lateCloseConn is a Conn whose request streams end their send side only
// after the server stopped reading them (its STOP_SENDING): the order a
// busy client meets when the server answers a GET before the client's FIN
// goes out.
type lateCloseConn struct{ Conn }

func (c lateCloseConn) OpenStreamSync(ctx context.Context) (Stream, error) {
	st, err := c.Conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	return lateCloseStream{st}, nil
}

type lateCloseStream struct{ Stream }

func (s lateCloseStream) Close() error {
	select {
	case <-s.Context().Done():
	case <-time.After(5 * time.Second):
	}
	return s.Stream.Close()
}

// RFC 9114 §4.1: "When the server does not need to receive the remainder
// of the request, it MAY abort reading the request stream, send a complete
// response, and cleanly close the sending part of the stream. ... Clients
// MUST NOT discard complete responses as a result of having their request
// terminated abruptly." quic-go's http3.Server stops reading a GET once
// its handler returned; quic-go then refuses the client's Close ("close
// called for canceled stream"), and the response must still be the
// client's (1 of 100 runs of TestDialerFallsBackToPlainQuicGoServer failed
// so on a loaded machine).
func TestResponseAfterServerStoppedReading(t *testing.T) {
	srvTLS, cliTLS := tlsPair(t)
	pc := udpListen(t)
	srv := &http3.Server{Handler: newTestHandler(), TLSConfig: srvTLS, QUICConfig: quicConf}
	go srv.Serve(pc)
	t.Cleanup(func() { srv.Close() })
	tr := &Transport{Dial: func(ctx context.Context, authority string) (Conn, error) {
		c, err := quic.DialAddr(ctx, authority, cliTLS, quicConf)
		if err != nil {
			return nil, err
		}
		return lateCloseConn{FromQUIC(c)}, nil
	}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	resp, err := c.Get("https://" + pc.LocalAddr().String() + "/big?n=1000")
	if err != nil {
		t.Fatalf("a complete response discarded: %v", err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 1000 || sum(b) != sum(pattern(1000)) {
		t.Fatalf("body: %d bytes, %v", len(b), err)
	}
}
