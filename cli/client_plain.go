package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// plainDownload fetches c.tgt over plain HTTP/3 on plain, the connection
// that get's first handshake made when the server chose "h3" instead of a
// session (connectAny): the fallback, single path, no extra round
// trip. pcs are the sockets of -paths: the connection runs on the first and
// migrates to the next when its path fails (session.Migrate).
func (c *clientCmd) plainDownload(ctx context.Context, plain *quic.Conn, pcs []net.PacketConn, w io.Writer, finish func(ok bool), start time.Time) metrics.Result {
	defer plain.CloseWithError(0, "")
	c.logf("path 1 (from %v): the server chose plain HTTP/3 (ALPN %s): single path, no session", plain.LocalAddr(), plain.ConnectionState().TLS.NegotiatedProtocol)
	for i := 2; i <= len(pcs); i++ {
		c.logf("path %d (from %v): a spare: the connection migrates to it if its path fails", i, pcs[i-1].LocalAddr())
	}
	if len(pcs) > 1 {
		session.Migrate(plain, pcs[1:], c.logf)
	}
	tr := &h3.Transport{Dial: func(context.Context, string) (h3.Conn, error) {
		if plain.Context().Err() != nil {
			return nil, fmt.Errorf("connection ended: %w", context.Cause(plain.Context()))
		}
		return h3.FromQUIC(plain), nil
	}}
	hc := &http.Client{Transport: tr, CheckRedirect: sameAuthority}
	label := "get " + c.tgt.path
	d, fct, stall, unverified, err := c.timedGet(ctx, start, label, w, func(w io.Writer, update func(got, size int64)) (mpfile.Download, error) {
		return mpfile.HTTPGet(ctx, hc, c.tgt.url(), w, update)
	})
	finish(err == nil)
	r := mpfile.NewResult(c.meta(), d, fct, session.Stats{}, nil, err)
	r.MaxStallSec = stall.Seconds()
	r.Mode, r.Unverified = metrics.ModeSinglePath, unverified
	r.PerPathBytes = []uint64{uint64(d.Received)}
	r.Extra["paths"] = 1
	r.RetransPackets = plain.ConnectionStats().PacketsLost
	if !c.o.quiet && err == nil {
		fmt.Fprintf(c.stderr, "%s: %d bytes in %.2f s, %.2f Mbit/s over 1 path (the server chose plain HTTP/3), %s\n", label, d.Received, fct.Seconds(), r.GoodputBps/1e6, verdict(unverified))
	}
	return r
}

// timedGet runs fetch, the download of label, with the progress display
// and the stall timer (the longest wait for in-order bytes, from the
// request to the last byte: max_stall_s), and applies -require-digest and
// the interruption's cause to its error. fct runs from start.
func (c *clientCmd) timedGet(ctx context.Context, start time.Time, label string, w io.Writer,
	fetch func(w io.Writer, update func(got, size int64)) (mpfile.Download, error)) (d mpfile.Download, fct, stall time.Duration, unverified bool, err error) {
	var st metrics.StallTimer
	st.Begin(time.Now())
	update, done := c.progress(label)
	d, err = fetch(metrics.StallWriter{W: w, T: &st}, update)
	done()
	fct = time.Since(start)
	st.End(start.Add(fct))
	if err != nil {
		unverified, err = c.digestPolicy(err)
		err = interrupted(ctx, err)
	}
	return d, fct, st.Max(), unverified, err
}

// digestPolicy applies -require-digest to a download's error: a missing
// Repr-Digest is no error unless it is required (unverified reports it).
func (c *clientCmd) digestPolicy(err error) (unverified bool, _ error) {
	if !errors.Is(err, mpfile.ErrNoDigest) {
		return false, err
	}
	if c.o.requireDigest {
		return false, fmt.Errorf("%w (-require-digest)", err)
	}
	return true, nil
}

// verdict is the summary line's word on the data's check.
func verdict(unverified bool) string {
	if unverified {
		return "UNVERIFIED (the server sent no Repr-Digest)"
	}
	return "SHA-256 ok"
}

// missingFlags names the required flags that are missing, or is nil.
func missingFlags(noAddr, noCA bool) error {
	var miss []string
	if noAddr {
		miss = append(miss, "-addr (or an https URL)")
	}
	if noCA {
		miss = append(miss, "-ca (the server's -dev-cert writes DIR/cert.pem)")
	}
	switch len(miss) {
	case 0:
		return nil
	case 1:
		return errors.New(miss[0] + " is required")
	}
	return errors.New(strings.Join(miss, " and ") + " are required")
}
