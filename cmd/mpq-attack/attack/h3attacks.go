package attack

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/quic-go/quic-go/quicvarint"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// The HTTP/3 attacks of issue 21 item 7, on raw sessions (protocol version
// 3). Each runs one round on each of o.Sessions sessions at once, bounded
// by o.Duration (each wait for the server by h3Wait too), and counts in
// Result.Answers how the server answered.

// MaxRequests bounds Options.Requests.
const MaxRequests = 100000

// dialH3 opens a raw session that grants the server 16 unidirectional
// streams and h3StreamWindow bytes per stream, and decodes what the server
// sends (acknowledging it like a genuine receiver).
func dialH3(ctx context.Context, o Options) (*Peer, error) {
	if Version() < 3 {
		return nil, errNoH3
	}
	p, a, err := dial(ctx, o.Addr, o.TLS, func(h *wire.Hello) {
		grantUniStreams(&h.Params, 16)
		setParam(&h.Params, "StreamWindow", h3StreamWindow)
	})
	if err != nil {
		return nil, err
	}
	p.h3 = newH3State(acceptParam(a, "MaxStreams"), acceptParam(a, "MaxUniStreams"))
	go p.consume(p.h3.feed)
	return p, nil
}

// awaitClose waits up to h3Wait for the server to close the session and
// counts how it closed (closeAnswer: "close 0x103", "session 1"), or
// "no close".
func (p *Peer) awaitClose(ctx context.Context, c *counters) error {
	select {
	case <-p.Conn.Context().Done():
	case <-ctx.Done():
		return errOnce
	case <-time.After(h3Wait):
	}
	c.answer(closeAnswer(p.Conn))
	return errOnce
}

// controlStream is a client control stream's opening: its type and an
// empty SETTINGS frame (RFC 9114 §6.2.1).
func controlStream() []byte {
	b := quicvarint.Append(nil, h3StreamControl)
	b = quicvarint.Append(b, h3FrameSettings)
	return quicvarint.Append(b, 0)
}

// H3SecondControl opens two HTTP/3 control streams on each session. RFC
// 9114 §6.2.1: "Receipt of a second stream claiming to be a control stream
// MUST be treated as a connection error of type H3_STREAM_CREATION_ERROR"
// (0x103): Answers counts "close 0x103".
func H3SecondControl(ctx context.Context, o Options) Result {
	return runWith(ctx, "h3-second-control", o, dialH3, func(ctx context.Context, p *Peer, c *counters) error {
		b := p.Data(clientStreamID(0, true), controlStream())
		b = append(b, p.Data(clientStreamID(1, true), controlStream())...)
		if err := p.Send(b...); err != nil {
			return err
		}
		c.frames.Add(2)
		return p.awaitClose(ctx, c)
	})
}

// H3DataFirst sends a DATA frame before any HEADERS on a request stream.
// RFC 9114 §4.1: "Receipt of an invalid sequence of frames MUST be treated
// as a connection error of type H3_FRAME_UNEXPECTED" (0x105): Answers
// counts "close 0x105".
func H3DataFirst(ctx context.Context, o Options) Result {
	return runWith(ctx, "h3-data-first", o, dialH3, func(ctx context.Context, p *Peer, c *counters) error {
		data := quicvarint.Append(nil, h3FrameData)
		data = quicvarint.Append(data, 5)
		data = append(data, "hello"...)
		if err := p.Send(p.Data(clientStreamID(0, false), data)...); err != nil {
			return err
		}
		c.frames.Add(1)
		return p.awaitClose(ctx, c)
	})
}

// H3BigHeaders sends a request whose field section is past the server's
// SETTINGS_MAX_FIELD_SECTION_SIZE (read from its control stream; 64 KiB if
// it announced none): one field whose value alone is that long. RFC 9114
// §4.2.2: a server "can send an HTTP 431 (Request Header Fields Too Large)
// status code"; pkg/h3 does, then stops reading the stream with
// H3_EXCESSIVE_LOAD. Answers counts "status 431" and "stop 0x107" (or
// "no answer").
func H3BigHeaders(ctx context.Context, o Options) Result {
	return runWith(ctx, "h3-big-headers", o, dialH3, func(ctx context.Context, p *Peer, c *counters) error {
		wctx, cancel := context.WithTimeout(ctx, h3Wait)
		defer cancel()
		h := p.h3
		if err := h.wait(wctx, p.Conn.Context(), func() bool { return h.settings != nil }); err != nil {
			c.answer("no settings")
			return errOnce
		}
		h.mu.Lock()
		limit, ok := h.settings[h3MaxFieldSect]
		h.mu.Unlock()
		if !ok || limit > 1<<20 {
			limit = 64 << 10
		}
		id := clientStreamID(0, false)
		h.watch(id)
		req := h3Request("GET", "/"+o.File, "x-big", strings.Repeat("~", int(limit)))
		// Within the session's window: the request is larger than the
		// window before the server's first Ack. If no Ack makes room, the
		// server may still have answered from what it got.
		if err := p.SendWithin(wctx, p.Data(id, req)...); err != nil && p.Conn.Context().Err() == nil && wctx.Err() == nil {
			return err
		}
		c.frames.Add(1)
		c.bytes.Add(int64(len(req)))
		var st h3Stream
		answered := func() bool {
			st = *h.streams[id]
			return st.status != 0 && st.stopSend >= 0 || st.reset >= 0
		}
		err := h.wait(wctx, p.Conn.Context(), answered)
		h.mu.Lock()
		answered()
		h.mu.Unlock()
		switch {
		case err != nil && st.status == 0 && st.reset < 0:
			if code, _, ok := closeCode(p.Conn); ok {
				c.answer(fmt.Sprintf("close %#x", code))
			} else {
				c.answer("no answer")
			}
		default:
			if st.status != 0 {
				c.answer(fmt.Sprintf("status %d", st.status))
			}
			if st.stopSend >= 0 {
				c.answer(fmt.Sprintf("stop %#x", st.stopSend))
			}
			if st.reset >= 0 {
				c.answer(fmt.Sprintf("reset %#x", st.reset))
			}
		}
		return errOnce
	})
}

// h3CancelBatch is how many cancelled requests go out in one write.
const h3CancelBatch = 64

// H3Cancel opens o.Requests (default 10000) request streams on each
// session, each with a valid GET of o.File followed by its cancellation
// (RESET_STREAM and STOP_SENDING with H3_REQUEST_CANCELLED, RFC 9114
// §4.1.1): half of them in the same write as the GET, the others with the
// next batch's write, when the server may have started their handlers. It
// waits for the server's stream credit (MAX_STREAMS)
// when it runs out: a server that kept anything of a cancelled request
// would stop granting credit ("credit stalled"). Then a HEAD of o.File
// must still be answered ("status 200"). Frames counts the cancelled
// requests, Credit the most streams the server allowed.
func H3Cancel(ctx context.Context, o Options) Result {
	n := o.Requests
	if n <= 0 {
		n = 10000
	}
	n = min(n, MaxRequests)
	req := h3Request("GET", "/"+o.File)
	return runWith(ctx, "h3-cancel", o, dialH3, func(ctx context.Context, p *Peer, c *counters) error {
		h := p.h3
		defer func() { // the credit reached, however the round ended
			h.mu.Lock()
			lim := h.bidiLimit
			h.mu.Unlock()
			for old := c.credit.Load(); lim > old && !c.credit.CompareAndSwap(old, lim); old = c.credit.Load() {
			}
		}()
		credit := func(i uint64) error {
			wctx, cancel := context.WithTimeout(ctx, h3Wait)
			defer cancel()
			return h.wait(wctx, p.Conn.Context(), func() bool { return i < h.bidiLimit })
		}
		var b [][]byte // frames
		size := 0
		add := func(fs ...[]byte) {
			for _, f := range fs {
				b = append(b, f)
				size += len(f)
			}
		}
		var late []uint64 // streams whose cancellation goes with the next write
		cancelReq := func(id uint64) {
			add(p.Reset(id, h3RequestCancelled), wire.AppendStopSending(nil, id, h3RequestCancelled))
		}
		flush := func() error {
			err := p.Send(b...)
			b, size = b[:0], 0
			for _, id := range late {
				cancelReq(id)
			}
			late = late[:0]
			return err
		}
		for i := uint64(0); i < uint64(n); i++ {
			h.mu.Lock()
			ok := i < h.bidiLimit
			h.mu.Unlock()
			if !ok || size > h3CancelBatch*(len(req)+32) {
				if err := flush(); err != nil {
					return err
				}
			}
			if !ok {
				if err := credit(i); err != nil {
					if ctx.Err() == nil {
						c.answer("credit stalled")
					}
					return errOnce
				}
			}
			id := clientStreamID(i, false)
			add(p.Data(id, req)...)
			if i%2 == 0 {
				cancelReq(id)
			} else {
				late = append(late, id) // the server may have started its handler
			}
			c.frames.Add(1)
			c.bytes.Add(int64(len(req)))
		}
		if err := flush(); err != nil { // the last GETs, then the last late cancellations
			return err
		}
		if err := flush(); err != nil {
			return err
		}
		// The session still serves: a HEAD must be answered.
		id := clientStreamID(uint64(n), false)
		if err := credit(uint64(n)); err != nil {
			if ctx.Err() == nil {
				c.answer("credit stalled")
			}
			return errOnce
		}
		h.watch(id)
		defer h.forget(id)
		add(p.Data(id, h3Request("HEAD", "/"+o.File))...)
		add(p.Fin(id))
		if err := flush(); err != nil {
			return err
		}
		wctx, cancel := context.WithTimeout(ctx, h3Wait)
		defer cancel()
		status := 0
		h.wait(wctx, p.Conn.Context(), func() bool { status = h.streams[id].status; return status != 0 })
		if status != 0 {
			c.answer(fmt.Sprintf("status %d", status))
		} else if ctx.Err() == nil {
			c.answer("no answer")
		}
		return errOnce
	})
}
