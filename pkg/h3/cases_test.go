package h3

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// The cases of the interop matrix (issue 21, "Interop with a peer nobody
// here wrote"): GET, HEAD, POST with a body, a 10 MB body, trailers, 100
// concurrent requests, cancellation mid-body, a 404, a Range request, and a
// server GOAWAY. Each runs against a testEnv: a client and a server, either
// of which may be quic-go's http3 or this package's.

// fileData is the content /file serves with http.ServeContent.
var fileData = pattern(1 << 20)

// pattern is n deterministic bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// testHandler serves the cases' paths. Its fields report what handlers saw.
type testHandler struct {
	mux       *http.ServeMux
	cancelled chan string   // a /slow handler saw its request context end
	entered   chan struct{} // a /wait handler started
	release   chan struct{} // closed to let /wait handlers answer
}

func newTestHandler() *testHandler {
	h := &testHandler{mux: http.NewServeMux(), cancelled: make(chan string, 16),
		entered: make(chan struct{}, 16), release: make(chan struct{})}
	h.mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "hello, h3")
	})
	h.mux.HandleFunc("/file", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"v1"`)
		http.ServeContent(w, r, "file.bin", time.Unix(1e9, 0), bytes.NewReader(fileData))
	})
	h.mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		hs := sha256.New()
		n, err := io.Copy(hs, r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("X-Len", strconv.FormatInt(n, 10))
		w.Header().Set("X-Trailer", r.Trailer.Get("X-Req-Sum"))
		io.WriteString(w, hex.EncodeToString(hs.Sum(nil)))
	})
	h.mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write(pattern(n))
	})
	h.mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		b := pattern(100 << 10)
		w.Write(b)
		w.(http.Flusher).Flush()
		w.Header().Set("X-Sum", sum(b))
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	})
	h.mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		chunk := pattern(64 << 10)
		for i := 0; i < 1000; i++ {
			if _, err := w.Write(chunk); err != nil {
				break
			}
			w.(http.Flusher).Flush()
			if r.Context().Err() != nil {
				break
			}
		}
		select {
		case <-r.Context().Done():
			select {
			case h.cancelled <- r.URL.Path:
			default: // the channel holds a few; the rest are not needed
			}
		case <-time.After(10 * time.Second):
		}
	})
	h.mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		h.entered <- struct{}{}
		<-h.release
		io.WriteString(w, "done")
	})
	return h
}

func (h *testHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// testEnv is one client-server pair of the matrix.
type testEnv struct {
	client    *http.Client
	base      string // "https://host:port"
	handler   *testHandler
	shutdown  func(ctx context.Context) error // the server's graceful Shutdown
	ourClient bool                            // the client is this package's (it sends request trailers)
}

type testCase struct {
	name string
	run  func(t testing.TB, e *testEnv)
}

func get(t testing.TB, e *testEnv, path string, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.base+path, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(t, e, req)
}

func do(t testing.TB, e *testEnv, req *http.Request) (*http.Response, []byte) {
	t.Helper()
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading body: %v", req.Method, req.URL.Path, err)
	}
	return resp, b
}

var matrix = []testCase{
	{"GET", func(t testing.TB, e *testEnv) {
		resp, b := get(t, e, "/hello")
		if resp.StatusCode != 200 || string(b) != "hello, h3" || resp.Header.Get("X-Proto") != "HTTP/3.0" || resp.ProtoMajor != 3 {
			t.Fatalf("GET /hello: %d %q proto %q/%d", resp.StatusCode, b, resp.Header.Get("X-Proto"), resp.ProtoMajor)
		}
	}},
	{"HEAD", func(t testing.TB, e *testEnv) {
		req, _ := http.NewRequest(http.MethodHead, e.base+"/file", nil)
		resp, b := do(t, e, req)
		// RFC 9110 §9.3.2: HEAD is GET without content; the length is
		// the one GET would send.
		if resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(len(fileData)) {
			t.Fatalf("HEAD /file: %d, %d body bytes, Content-Length %q", resp.StatusCode, len(b), resp.Header.Get("Content-Length"))
		}
	}},
	{"POST", func(t testing.TB, e *testEnv) {
		data := pattern(100 << 10)
		req, _ := http.NewRequest(http.MethodPost, e.base+"/echo", bytes.NewReader(data))
		resp, b := do(t, e, req)
		if resp.StatusCode != 200 || string(b) != sum(data) || resp.Header.Get("X-Len") != strconv.Itoa(len(data)) {
			t.Fatalf("POST /echo: %d %q len %s", resp.StatusCode, b, resp.Header.Get("X-Len"))
		}
	}},
	{"10MB", func(t testing.TB, e *testEnv) {
		const n = 10 << 20
		resp, b := get(t, e, "/big?n="+strconv.Itoa(n))
		want := pattern(n)
		if resp.StatusCode != 200 || len(b) != n || sum(b) != sum(want) {
			t.Fatalf("GET 10 MB: %d, %d bytes, intact %v", resp.StatusCode, len(b), sum(b) == sum(want))
		}
		req, _ := http.NewRequest(http.MethodPost, e.base+"/echo", bytes.NewReader(want))
		resp, b = do(t, e, req)
		if resp.StatusCode != 200 || string(b) != sum(want) {
			t.Fatalf("POST 10 MB: %d %q", resp.StatusCode, b)
		}
	}},
	{"trailers", func(t testing.TB, e *testEnv) {
		resp, b := get(t, e, "/trailers")
		if resp.StatusCode != 200 || resp.Trailer.Get("X-Sum") != sum(b) || resp.Trailer.Get("X-Late") != "yes" {
			t.Fatalf("GET /trailers: %d, trailers %v, want X-Sum %s", resp.StatusCode, resp.Trailer, sum(b))
		}
		if !e.ourClient {
			return
		}
		data := pattern(5000)
		req, _ := http.NewRequest(http.MethodPost, e.base+"/echo", io.NopCloser(bytes.NewReader(data)))
		req.Trailer = http.Header{"X-Req-Sum": {sum(data)}}
		resp, b = do(t, e, req)
		if resp.StatusCode != 200 || resp.Header.Get("X-Trailer") != sum(data) {
			t.Fatalf("POST with trailers: %d, server saw trailer %q", resp.StatusCode, resp.Header.Get("X-Trailer"))
		}
	}},
	{"concurrent100", func(t testing.TB, e *testEnv) {
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 1000 + 97*i
				resp, err := e.client.Get(fmt.Sprintf("%s/big?n=%d", e.base, n))
				if err != nil {
					errs <- err
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || !bytes.Equal(b, pattern(n)) {
					errs <- fmt.Errorf("request %d: %v, %d bytes", i, err, len(b))
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}},
	{"cancel", func(t testing.TB, e *testEnv) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.base+"/slow", nil)
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(resp.Body, make([]byte, 100<<10)); err != nil {
			t.Fatalf("reading the start of /slow: %v", err)
		}
		cancel()
		// The client's Read fails once the request is cancelled...
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil {
			t.Fatal("body read to its end after the request was cancelled")
		}
		// ... and the server's handler sees its request context end
		// (RFC 9114 §4.1.1: H3_REQUEST_CANCELLED).
		select {
		case <-e.handler.cancelled:
		case <-time.After(5 * time.Second):
			t.Fatal("the server's handler never saw the cancellation")
		}
		// The connection still serves requests.
		if resp, b := get(t, e, "/hello"); resp.StatusCode != 200 || string(b) != "hello, h3" {
			t.Fatalf("GET after cancel: %d %q", resp.StatusCode, b)
		}
	}},
	{"404", func(t testing.TB, e *testEnv) {
		resp, _ := get(t, e, "/no/such/thing")
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("GET /no/such/thing: %d, want 404", resp.StatusCode)
		}
	}},
	{"Range", func(t testing.TB, e *testEnv) {
		resp, b := get(t, e, "/file", "Range", "bytes=1000-1999")
		if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(b, fileData[1000:2000]) ||
			resp.Header.Get("Content-Range") != fmt.Sprintf("bytes 1000-1999/%d", len(fileData)) {
			t.Fatalf("Range: %d, %d bytes, Content-Range %q", resp.StatusCode, len(b), resp.Header.Get("Content-Range"))
		}
		resp, b = get(t, e, "/file", "If-None-Match", `"v1"`)
		if resp.StatusCode != http.StatusNotModified || len(b) != 0 {
			t.Fatalf("If-None-Match: %d, %d bytes, want 304", resp.StatusCode, len(b))
		}
	}},
	// GOAWAY runs last: it shuts the server down.
	{"GOAWAY", func(t testing.TB, e *testEnv) {
		type result struct {
			body string
			err  error
		}
		res := make(chan result, 1)
		go func() {
			resp, err := e.client.Get(e.base + "/wait")
			if err != nil {
				res <- result{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			res <- result{string(b), err}
		}()
		<-e.handler.entered
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut := make(chan error, 1)
		go func() { shut <- e.shutdown(ctx) }()
		close(e.handler.release)
		// RFC 9114 §5.2: requests below the GOAWAY's ID complete; the client
		// then closes the connection, so a graceful Shutdown returns nil.
		if r := <-res; r.err != nil || r.body != "done" {
			t.Fatalf("request in flight at GOAWAY: %q, %v", r.body, r.err)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown: %v (the client did not close after GOAWAY)", err)
		}
	}},
}
