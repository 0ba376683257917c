package mpfile

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// servedTree is a directory with a hidden file, a hidden directory, a
// subdirectory with an index page, one without, and a symbolic link out of
// the directory; outside is a file next to it.
func servedTree(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "www")
	for _, d := range []string{"www/sub", "www/plain", "www/.git"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{
		"www/index.html":      "<h1>home</h1>",
		"www/.hidden-secret":  "secret",
		"www/.git/config":     "[core]",
		"www/sub/index.html":  "<h1>sub</h1>",
		"www/plain/a.txt":     "a",
		"www/plain/.dotfile":  "hidden",
		"outside-secret.txt":  "outside",
		"www/plain/b dir.txt": "b",
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "outside-secret.txt"), filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func get(t *testing.T, h http.Handler, method, path string) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

// Files refuses hidden files and directories and paths out of the
// directory (symbolic links included); directories have no listing unless
// Listing is set.
func TestFilesRefuses(t *testing.T) {
	dir := servedTree(t)
	h := &Files{Dir: dir}
	for _, p := range []string{"/.hidden-secret", "/.git/config", "/.git/", "/plain/.dotfile", "/escape", "/../outside-secret.txt", "/plain/", "/nothing"} {
		w := get(t, h, http.MethodGet, p)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", p, w.Code)
		}
		if b := w.Body.String(); strings.Contains(b, "secret") || strings.Contains(b, "outside") || strings.Contains(b, "a.txt") {
			t.Errorf("GET %s leaked %q", p, b)
		}
	}
	if w := get(t, h, http.MethodPost, "/index.html"); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", w.Code)
	}
	// With Listing: names without the hidden ones, with a digest.
	hl := &Files{Dir: dir, Listing: true}
	w := get(t, hl, http.MethodGet, "/plain/")
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `href="a.txt"`) || !strings.Contains(body, "b dir.txt") || strings.Contains(body, "dotfile") {
		t.Errorf("listing: %d %q", w.Code, body)
	}
	checkDigest(t, "listing", w)
	if w := get(t, hl, http.MethodGet, "/.git/"); w.Code != http.StatusNotFound {
		t.Errorf("listing of a hidden directory: %d", w.Code)
	}
}

// Every 200 carries Repr-Digest, index pages included; /index.html is
// served as is (no redirect); a directory without its slash is redirected.
func TestHTTPDigestEverywhere(t *testing.T) {
	dir := servedTree(t)
	h := &Files{Dir: dir}
	for p, want := range map[string]string{"/": "home", "/index.html": "home", "/sub/": "sub", "/sub/index.html": "sub", "/plain/a.txt": "a"} {
		w := get(t, h, http.MethodGet, p)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), want) {
			t.Errorf("GET %s: %d %q", p, w.Code, w.Body.String())
			continue
		}
		checkDigest(t, p, w)
	}
	w := get(t, h, http.MethodGet, "/sub?x=1")
	if w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "/sub/?x=1" {
		t.Errorf("GET /sub: %d, Location %q", w.Code, w.Header().Get("Location"))
	}
	w = get(t, h, http.MethodHead, "/index.html")
	if w.Code != http.StatusOK || w.Header().Get(DigestHeader) == "" || w.Body.Len() != 0 {
		t.Errorf("HEAD: %d, digest %q, %d body bytes", w.Code, w.Header().Get(DigestHeader), w.Body.Len())
	}
}

func checkDigest(t *testing.T, what string, w *httptest.ResponseRecorder) {
	t.Helper()
	want, ok := parseDigest(w.Header().Get(DigestHeader))
	if sum := sha256.Sum256(w.Body.Bytes()); !ok || !bytes.Equal(want, sum[:]) {
		t.Errorf("%s: Repr-Digest %q does not match the body", what, w.Header().Get(DigestHeader))
	}
}

// The client follows the redirect of a directory URL and verifies the
// index page; /index.html, the README's example, verifies; a refused name
// is a 404 wrapping ErrServer. (Over HTTP/3 on a session: cli's tests.)
func TestHTTPGetIndex(t *testing.T) {
	srv := httptest.NewServer(&Files{Dir: servedTree(t)})
	defer srv.Close()
	hc := srv.Client()
	for p, want := range map[string]string{"/index.html": "<h1>home</h1>", "/sub": "<h1>sub</h1>", "/": "<h1>home</h1>", "/plain/a.txt": "a"} {
		var got bytes.Buffer
		d, err := HTTPGet(context.Background(), hc, srv.URL+p, &got, nil)
		if err != nil || !d.SHA256OK || got.String() != want || d.Size != int64(len(want)) {
			t.Errorf("%s: %v, ok %v, size %d, body %q", p, err, d.SHA256OK, d.Size, got.String())
		}
	}
	for _, p := range []string{"/.hidden-secret", "/missing", "/../outside-secret.txt"} {
		_, err := HTTPGet(context.Background(), hc, srv.URL+p, io.Discard, nil)
		if !errors.Is(err, ErrServer) || !strings.Contains(err.Error(), "404") {
			t.Errorf("%s: %v, want a 404", p, err)
		}
	}
}

// A body that does not hash to its Repr-Digest is ErrMismatch; one without
// a digest arrives whole with ErrNoDigest.
func TestHTTPGetChecksDigest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bad" {
			w.Header().Set(DigestHeader, digestValue(sha256.Sum256([]byte("other"))))
		}
		io.WriteString(w, "body")
	}))
	defer srv.Close()
	var got bytes.Buffer
	if d, err := HTTPGet(context.Background(), srv.Client(), srv.URL+"/bad", &got, nil); !errors.Is(err, ErrMismatch) || d.SHA256OK || got.String() != "body" {
		t.Errorf("bad digest: %v %+v %q", err, d, got.String())
	}
	if d, err := HTTPGet(context.Background(), srv.Client(), srv.URL+"/none", io.Discard, nil); !errors.Is(err, ErrNoDigest) || d.Received != 4 {
		t.Errorf("no digest: %v %+v", err, d)
	}
}
