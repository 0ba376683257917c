package h3

import (
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
)

// The ResponseWriter behaves as net/http's: a sniffed Content-Type, a
// Content-Length for a body that was buffered whole, none after a Flush,
// no body for 204, and a handler's panic resets the stream with
// H3_INTERNAL_ERROR.
func TestResponseWriterSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		noBody := make(chan error, 1)
		mux := http.NewServeMux()
		mux.HandleFunc("/sniff", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html><body>hi</body></html>") })
		mux.HandleFunc("/flushed", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "a")
			w.(http.Flusher).Flush()
			io.WriteString(w, "b")
		})
		mux.HandleFunc("/204", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
			_, err := w.Write([]byte("x"))
			noBody <- err
		})
		mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) { panic("boom") })
		b := newSessionBed(t, mux, nil, nil)
		defer b.close()
		c := &http.Client{Transport: b.tr}
		get := func(path string) (*http.Response, string, error) {
			resp, err := c.Get("https://mp.test" + path)
			if err != nil {
				return nil, "", err
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			return resp, string(body), err
		}
		resp, body, err := get("/sniff")
		if err != nil || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || resp.ContentLength != int64(len(body)) {
			t.Errorf("/sniff: %v, Content-Type %q, ContentLength %d for %d bytes", err, resp.Header.Get("Content-Type"), resp.ContentLength, len(body))
		}
		resp, body, err = get("/flushed")
		if err != nil || body != "ab" || resp.ContentLength != -1 {
			t.Errorf("/flushed: %v %q ContentLength %d, want \"ab\" of unknown length", err, body, resp.ContentLength)
		}
		resp, body, err = get("/204")
		if err != nil || resp.StatusCode != 204 || body != "" || !errors.Is(<-noBody, http.ErrBodyNotAllowed) {
			t.Errorf("/204: %v %v %q", err, resp, body)
		}
		if _, _, err = get("/panic"); !errors.Is(err, &Error{Code: ErrCodeInternalError, Stream: true, Remote: true}) {
			t.Errorf("/panic: %v, want the server's stream error H3_INTERNAL_ERROR", err)
		}
	})
}
