package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// target is what get, http-get and compare fetch: an https URL, or a
// path on -addr.
type target struct {
	authority string // host:port of the URL (the :authority of the requests)
	path      string // URL path and query, starting with "/"
	host      string // host of an https URL, "" for a bare path
}

// parseTarget reads the command's argument: https://HOST[:PORT]/PATH (the
// port defaulting to 443), or a bare path, fetched from addr.
func parseTarget(arg, addr string) (target, error) {
	if !strings.Contains(arg, "://") {
		return target{authority: addr, path: ensureSlash(arg)}, nil
	}
	u, err := url.Parse(arg)
	if err != nil {
		return target{}, fmt.Errorf("URL %q: %v", arg, err)
	}
	if u.Scheme != "https" || u.Host == "" || u.User != nil {
		return target{}, fmt.Errorf("URL %q: want https://HOST[:PORT]/PATH", arg)
	}
	auth := u.Host
	if u.Port() == "" {
		auth = net.JoinHostPort(u.Hostname(), "443")
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return target{authority: auth, path: p, host: u.Hostname()}, nil
}

// url is the request URL of t.
func (t target) url() string { return "https://" + t.authority + t.path }

// h3Get fetches t over HTTP/3 on the session s into w, checked against
// the response's Repr-Digest, then asks the server for its counters of s
// (mpfile.StatsPath). The session stays open (the caller closes it).
func h3Get(ctx context.Context, s *session.Session, t target, w io.Writer, progress func(got, size int64)) (mpfile.Download, error) {
	tr := &h3.Transport{Dial: func(context.Context, string) (h3.Conn, error) {
		if s.Context().Err() != nil {
			return nil, fmt.Errorf("session ended: %w", context.Cause(s.Context()))
		}
		return h3.FromSession(s), nil
	}}
	hc := &http.Client{Transport: tr, CheckRedirect: sameAuthority}
	d, err := mpfile.HTTPGet(ctx, hc, t.url(), w, progress)
	if err == nil || errors.Is(err, mpfile.ErrMismatch) || errors.Is(err, mpfile.ErrNoDigest) {
		if ss, serr := mpfile.HTTPStats(ctx, hc, "https://"+t.authority); serr == nil {
			d.Server = ss
		}
	}
	return d, err
}

// sameAuthority lets the client follow a redirect only on the session it
// has (same scheme and authority), at most 10 times.
func sameAuthority(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects")
	}
	if req.URL.Scheme != "https" || req.URL.Host != via[0].URL.Host {
		return fmt.Errorf("redirect to %s: another server (the session reaches %s only)", req.URL.Redacted(), via[0].URL.Host)
	}
	return nil
}
