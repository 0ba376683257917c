package h3

import (
	"net"
	"net/http"
	"strconv"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// How a plain HTTP/3 client learns that multipath is offered: an Alt-Svc
// header (RFC 7838), not an HTTP/3 SETTINGS parameter. Alt-Svc reaches the
// application through any HTTP library's response headers (net/http's
// resp.Header, curl -v, a browser's devtools), names the port, and carries
// a lifetime; a SETTINGS parameter (RFC 9114 §7.2.4.1: unknown ones "MUST
// be ignored") stays inside the HTTP/3 stack, where no client API shows it,
// and says nothing that the ALPN a multipath client offers does not
// already negotiate.

// AltSvcMaxAge is the lifetime AdvertiseMultipath gives its Alt-Svc entry,
// seconds (RFC 7838 §3.1 "ma"; the default there is 24 hours).
const AltSvcMaxAge = 86400

// AltSvcMultipath is the Alt-Svc field value that advertises the session
// protocol on port (RFC 7838 §3: the ALPN "mpqsched/1" percent-encoded,
// as '/' is not a token character; an empty host is the origin's own).
func AltSvcMultipath(port int) string {
	return `mpqsched%2F1=":` + strconv.Itoa(port) + `"; ma=` + strconv.Itoa(AltSvcMaxAge)
}

// AdvertiseMultipath wraps h so that every response to a request that came
// over plain HTTP/3 (not a session) carries the Alt-Svc header
// AltSvcMultipath of the port the request arrived on: RFC 7838 §3 "the
// origin's resources are also accessible at the alternative service". A
// Server sets the request context's http.LocalAddrContextKey; without it
// no header is added.
func AdvertiseMultipath(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && r.TLS.NegotiatedProtocol != session.ALPN {
			if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
				if u, ok := a.(*net.UDPAddr); ok && u.Port > 0 {
					w.Header().Set("Alt-Svc", AltSvcMultipath(u.Port))
				}
			}
		}
		h.ServeHTTP(w, r)
	})
}
