package mpfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// indexPage is the file a directory's URL serves, if present.
const indexPage = "index.html"

// DigestHeader carries a file's SHA-256 in HTTP responses (RFC 9530).
const DigestHeader = "Repr-Digest"

// Files is an http.Handler of the files of Dir: GET and HEAD (others: 405),
// with checkPath's path rule (no hidden files, no "..", nothing outside
// Dir, symbolic links included). A directory URL without its final slash is
// redirected to the URL with it; a directory serves its index.html, else
// its listing if Listing is set, else 404. Every 200 response carries
// Repr-Digest (SHA-256 of the full representation: the file, the index
// page, or the listing's bytes), so the client can verify whatever it is
// sent; files' sums are computed once per size and modification time. The
// zero value with Dir set is ready to use; it is safe for concurrent use.
type Files struct {
	Dir     string // directory served; URL paths are slash paths inside it
	Listing bool   // serve a listing for a directory without index.html (default: 404)

	hc hashCache
}

// ServeHTTP serves r from Dir.
func (sv *Files) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rel, err := checkPath(r.URL.Path)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	f, err := os.OpenInRoot(sv.Dir, rel)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		http.NotFound(w, r)
		return
	}
	if fi.Mode().IsRegular() {
		sv.serveRegular(w, r, f, fi, rel)
		return
	}
	if !fi.IsDir() {
		http.NotFound(w, r)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/") {
		target := r.URL.Path + "/"
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		http.Redirect(w, r, target, http.StatusMovedPermanently)
		return
	}
	idxRel := path.Join(rel, indexPage)
	if idx, err := os.OpenInRoot(sv.Dir, idxRel); err == nil {
		defer idx.Close()
		if ifi, err := idx.Stat(); err == nil && ifi.Mode().IsRegular() {
			sv.serveRegular(w, r, idx, ifi, idxRel)
			return
		}
	}
	if !sv.Listing {
		http.NotFound(w, r)
		return
	}
	body, err := listing(f, r.URL.Path)
	if err != nil {
		http.Error(w, "cannot list the directory", http.StatusInternalServerError)
		return
	}
	sum := sha256.Sum256(body)
	w.Header().Set(DigestHeader, digestValue(sum))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
}

// serveRegular serves the open regular file f (rel inside Dir) with its
// digest.
func (sv *Files) serveRegular(w http.ResponseWriter, r *http.Request, f *os.File, fi os.FileInfo, rel string) {
	sum, err := sv.hc.sum(filepath.Join(sv.Dir, filepath.FromSlash(rel)), fi, f)
	if err != nil {
		http.Error(w, "cannot read the file", http.StatusInternalServerError)
		return
	}
	w.Header().Set(DigestHeader, digestValue(sum))
	http.ServeContent(w, r, fi.Name(), fi.ModTime(), f)
}

// digestValue is a Repr-Digest field value for a SHA-256 sum (RFC 9530).
func digestValue(sum [sha256.Size]byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
}

// listing renders the entries of the open directory dir that checkPath
// allows (no hidden files) as an HTML list, sorted by name; directories end
// in "/".
func listing(dir *os.File, urlPath string) ([]byte, error) {
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if _, err := checkPath(e.Name()); err != nil {
			continue
		}
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	var b bytes.Buffer
	fmt.Fprintf(&b, "<!doctype html>\n<title>%s</title>\n<pre>\n", html.EscapeString(urlPath))
	for _, n := range names {
		u := url.URL{Path: n}
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", html.EscapeString(u.String()), html.EscapeString(n))
	}
	b.WriteString("</pre>\n")
	return b.Bytes(), nil
}
