package mpfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Download is what one HTTPGet measured.
type Download struct {
	Size     int64        // size announced by the server (Content-Length), bytes; the bytes received if it announced none
	Received int64        // bytes received and written to the output
	SHA256OK bool         // the received bytes hash to the announced SHA-256
	Server   *ServerStats // the server's sender counters (HTTPStats); nil if not asked or none sent
}

// HTTPGet fetches url with c into w and checks the body against the
// response's Repr-Digest (sha-256) header; without one it returns the
// Download and ErrNoDigest, the data all received; progress, if not nil, is
// called with the bytes received so far and the announced size (-1 if
// unknown). A status other than 200 is an error wrapping ErrServer with the
// server's message.
func HTTPGet(ctx context.Context, c *http.Client, url string, w io.Writer, progress func(got, size int64)) (Download, error) {
	var d Download
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return d, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return d, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return d, fmt.Errorf("%w: %s: %s", ErrServer, resp.Status, strings.TrimSpace(string(msg)))
	}
	d.Size = resp.ContentLength
	want, hasDigest := parseDigest(resp.Header.Get(DigestHeader))
	sum := sha256.New()
	out := io.MultiWriter(w, sum)
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := out.Write(buf[:n]); werr != nil {
				return d, werr
			}
			d.Received += int64(n)
			if progress != nil {
				progress(d.Received, d.Size)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			return d, fmt.Errorf("after %d bytes: %w", d.Received, err)
		}
	}
	if d.Size < 0 {
		d.Size = d.Received
	}
	if !hasDigest {
		return d, ErrNoDigest
	}
	d.SHA256OK = bytes.Equal(sum.Sum(nil), want)
	if !d.SHA256OK {
		return d, ErrMismatch
	}
	return d, nil
}

// ErrServer wraps an error the server reported (a status other than 200).
var ErrServer = errors.New("server")

// ErrMismatch means the data received did not hash to the announced SHA-256.
var ErrMismatch = errors.New("SHA-256 mismatch: the file received differs from the server's")

// ErrNoDigest means the response carried no Repr-Digest (sha-256): the
// data arrived whole but could not be verified.
var ErrNoDigest = errors.New("response has no " + DigestHeader + " header: cannot verify the data")

// parseDigest extracts the sha-256 value of a Repr-Digest header.
func parseDigest(h string) ([]byte, bool) {
	for _, item := range strings.Split(h, ",") {
		v, ok := strings.CutPrefix(strings.TrimSpace(item), "sha-256=:")
		if !ok {
			continue
		}
		b, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(v, ":"))
		if err == nil && len(b) == sha256.Size {
			return b, true
		}
	}
	return nil, false
}
