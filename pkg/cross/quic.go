package cross

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/certs"
)

// alpn is the ALPN protocol of the cross-traffic connections.
const alpn = "mpqsched-cross"

// keepAlive keeps an on/off connection alive through long off periods
// (quic-go's idle timeout is 30 s).
const keepAlive = 10 * time.Second

// runQUIC runs a quic-go connection from the client to the server; the
// server writes to a unidirectional stream for each on period (one for the
// whole life of a bulk flow) and the client counts what it reads.
func (f *Flow) runQUIC(ctx context.Context) error {
	pair, err := certs.SelfSigned("cross.test")
	if err != nil {
		return err
	}
	srvTLS, cliTLS := pair.Server.Clone(), pair.Client.Clone()
	srvTLS.NextProtos, cliTLS.NextProtos = []string{alpn}, []string{alpn}
	conf := &quic.Config{KeepAlivePeriod: keepAlive}

	srvTr := &quic.Transport{Conn: f.server}
	cliTr := &quic.Transport{Conn: f.client}
	f.onClose(func() { srvTr.Close() })
	f.onClose(func() { cliTr.Close() })
	ln, err := srvTr.Listen(srvTLS, conf)
	if err != nil {
		return err
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		if err := f.send(ctx, ln); err != nil && ctx.Err() == nil {
			f.fail(err)
		}
	}()
	conn, err := cliTr.Dial(ctx, f.server.LocalAddr(), cliTLS, conf)
	if err != nil {
		return err
	}
	return f.receive(ctx, conn)
}

// receive reads every stream the server opens and records what arrives.
func (f *Flow) receive(ctx context.Context, conn *quic.Conn) error {
	buf := make([]byte, 64<<10)
	for {
		str, err := conn.AcceptUniStream(ctx)
		if err != nil {
			return nil // the connection ended (Stop)
		}
		for {
			n, err := str.Read(buf)
			f.rec.add(n)
			if err != nil {
				var se *quic.StreamError
				if errors.Is(err, io.EOF) || errors.As(err, &se) {
					break // the server ended or reset this on period
				}
				return nil // the connection ended
			}
		}
	}
}

// send accepts the client's connection and writes one stream per on period.
func (f *Flow) send(ctx context.Context, ln *quic.Listener) error {
	conn, err := ln.Accept(ctx)
	if err != nil {
		return nil // stopped before the client arrived
	}
	chunk := make([]byte, 32<<10)
	for {
		onEnd, offEnd, ok := f.period(f.net.Elapsed())
		if !ok {
			return nil
		}
		str, err := conn.OpenUniStreamSync(ctx)
		if err != nil {
			return nil // the connection ended
		}
		if onEnd < time.Duration(1<<63-1) {
			str.SetWriteDeadline(f.net.Start().Add(onEnd))
		}
		for {
			if _, err := str.Write(chunk); err != nil {
				if !errors.Is(err, os.ErrDeadlineExceeded) {
					return nil // the connection ended
				}
				break
			}
		}
		str.CancelWrite(0) // drop what the period left unsent
		if !f.sleepUntil(ctx, offEnd) {
			return nil
		}
	}
}
