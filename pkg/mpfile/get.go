package mpfile

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// Download is what one Get measured.
type Download struct {
	Size     int64        // file size announced by the server, bytes
	Received int64        // bytes received and written to the output
	SHA256OK bool         // the received bytes hash to the announced SHA-256
	Server   *ServerStats // the server's sender counters; nil if it sent none
}

// Get fetches the file name over a new stream of s into w. progress, if not
// nil, is called with the bytes received so far and the size. It returns a
// non-nil error if the server refused (wrapping ErrServer), the transfer
// broke (a server that reset the stream for its write timeout: an error
// wrapping ErrWriteTimeout and the *session.StreamError), or the data did
// not match the announced SHA-256. While the server's stream credit is used
// up, Get waits for credit until ctx ends.
func Get(ctx context.Context, s *session.Session, name string, w io.Writer, progress func(got, size int64)) (Download, error) {
	var d Download
	st, err := s.OpenStreamSync(ctx)
	if err != nil {
		return d, err
	}
	defer st.CloseRead()
	defer st.Close()
	// A cancelled context unblocks a Read in progress.
	stop := context.AfterFunc(ctx, func() { st.SetDeadline(aLongTimeAgo) })
	defer stop()
	ctxErr := func(err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if _, err := fmt.Fprintf(st, "%s%s\n", cmdFile, name); err != nil {
		return d, ctxErr(err)
	}
	br := bufio.NewReaderSize(st, 64<<10)
	line, err := readLine(br)
	if err != nil {
		return d, ctxErr(fmt.Errorf("reading response header: %w", streamErr(err)))
	}
	h, err := parseHeader(line)
	if err != nil {
		return d, err
	}
	d.Size = h.size
	sum := sha256.New()
	out := io.MultiWriter(w, sum)
	buf := make([]byte, 64<<10)
	for d.Received < h.size {
		n, err := br.Read(buf[:min(int64(len(buf)), h.size-d.Received)])
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return d, werr
			}
			d.Received += int64(n)
			if progress != nil {
				progress(d.Received, h.size)
			}
		}
		if err != nil && d.Received < h.size {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return d, ctxErr(fmt.Errorf("after %d of %d bytes: %w", d.Received, h.size, streamErr(err)))
		}
	}
	d.SHA256OK = [sha256.Size]byte(sum.Sum(nil)) == h.sum
	// Ask for the sender's counters; a server that does not answer costs
	// nothing but the trailer.
	if _, err := fmt.Fprintf(st, "%s\n", cmdStats); err == nil {
		st.Close()
		if line, err := readLine(br); err == nil {
			var ss ServerStats
			if json.Unmarshal([]byte(line), &ss) == nil {
				d.Server = &ss
			}
		}
	}
	if !d.SHA256OK {
		return d, ErrMismatch
	}
	return d, nil
}

// ErrMismatch means the data received did not hash to the announced SHA-256.
var ErrMismatch = errors.New("SHA-256 mismatch: the file received differs from the server's")
