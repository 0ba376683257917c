package h3

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/quic-go/qpack"
	"golang.org/x/net/http/httpguts"
)

// decodeFields decodes a QPACK field section, bounded by lim's size and
// count. A QPACK error is a connection error QPACK_DECOMPRESSION_FAILED (RFC
// 9204 §2.2.3); a section past the limits is tooBig.
func decodeFields(p []byte, maxBytes, maxCount int) ([]qpack.HeaderField, error) {
	next := qpack.NewDecoder().Decode(p)
	var fields []qpack.HeaderField
	size := 0
	for {
		f, err := next()
		if err != nil {
			if err == io.EOF {
				return fields, nil
			}
			return nil, connError(ErrCodeQPACKDecompressionFailed, "%v", err)
		}
		// RFC 9114 §4.2.2: "The size of a field list is calculated based on
		// the uncompressed size of fields, including the length of the name
		// and value in bytes plus an overhead of 32 bytes for each field."
		size += len(f.Name) + len(f.Value) + 32
		if size > maxBytes || len(fields) >= maxCount {
			return nil, errHeaderTooLarge
		}
		fields = append(fields, f)
	}
}

// errHeaderTooLarge is a field section past this end's limits; a server
// answers 431, a client fails the request.
var errHeaderTooLarge = streamError(ErrCodeExcessiveLoad, "field section too large")

// connectionHeaders may not appear in HTTP/3 (RFC 9114 §4.2: "An endpoint
// MUST NOT generate an HTTP/3 field section containing connection-specific
// fields ... treated as malformed").
var connectionHeaders = map[string]bool{
	"connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "upgrade": true,
}

// checkField validates one regular field (RFC 9114 §4.2, §4.1.2).
func checkField(f qpack.HeaderField) error {
	// §4.2: "Characters in field names MUST be converted to lowercase";
	// "A request or response containing uppercase characters in field
	// names MUST be treated as malformed."
	for i := 0; i < len(f.Name); i++ {
		if c := f.Name[i]; c >= 'A' && c <= 'Z' {
			return streamError(ErrCodeMessageError, "uppercase field name %q", f.Name)
		}
	}
	if !httpguts.ValidHeaderFieldName(f.Name) || !httpguts.ValidHeaderFieldValue(f.Value) {
		return streamError(ErrCodeMessageError, "invalid field %q", f.Name)
	}
	if connectionHeaders[f.Name] || (f.Name == "te" && f.Value != "trailers") {
		return streamError(ErrCodeMessageError, "connection-specific field %q", f.Name)
	}
	return nil
}

// fieldsToHeader builds a header from regular fields. Pseudo-fields are
// refused (trailers may not hold any: RFC 9114 §4.3).
func fieldsToHeader(fields []qpack.HeaderField) (http.Header, error) {
	h := make(http.Header, len(fields))
	for _, f := range fields {
		if f.IsPseudo() {
			return nil, streamError(ErrCodeMessageError, "pseudo-header %q in trailers", f.Name)
		}
		if err := checkField(f); err != nil {
			return nil, err
		}
		h.Add(http.CanonicalHeaderKey(f.Name), f.Value)
	}
	return h, nil
}

// splitPseudo checks the pseudo-fields' placement and uniqueness (RFC 9114
// §4.3: "Pseudo-header fields MUST appear in the header section before
// regular header fields"; each at most once) and returns them by name plus
// the regular header. allowed lists the pseudo-fields valid here.
func splitPseudo(fields []qpack.HeaderField, allowed ...string) (map[string]string, http.Header, error) {
	pseudo := make(map[string]string, 4)
	h := make(http.Header, len(fields))
	regular := false
	for _, f := range fields {
		if f.IsPseudo() {
			if regular {
				return nil, nil, streamError(ErrCodeMessageError, "pseudo-header %q after a regular field", f.Name)
			}
			ok := false
			for _, a := range allowed {
				ok = ok || a == f.Name
			}
			if !ok {
				return nil, nil, streamError(ErrCodeMessageError, "pseudo-header %q not allowed", f.Name)
			}
			if _, dup := pseudo[f.Name]; dup {
				return nil, nil, streamError(ErrCodeMessageError, "duplicate %q", f.Name)
			}
			pseudo[f.Name] = f.Value
			continue
		}
		regular = true
		if err := checkField(f); err != nil {
			return nil, nil, err
		}
		h.Add(http.CanonicalHeaderKey(f.Name), f.Value)
	}
	return pseudo, h, nil
}

// contentLength reads the content-length field: -1 when absent; several
// values must agree (RFC 9110 §8.6).
func contentLength(h http.Header) (int64, error) {
	vs := h.Values("Content-Length")
	if len(vs) == 0 {
		return -1, nil
	}
	var n int64 = -1
	for _, v := range vs {
		for _, part := range strings.Split(v, ",") {
			m, err := strconv.ParseInt(strings.TrimSpace(part), 10, 64)
			if err != nil || m < 0 || (n >= 0 && m != n) {
				return 0, streamError(ErrCodeMessageError, "bad content-length %q", v)
			}
			n = m
		}
	}
	return n, nil
}

// requestFromFields builds a server-side request from a header section
// (RFC 9114 §4.3.1). Its Body, context and RemoteAddr are set by the caller.
func requestFromFields(fields []qpack.HeaderField) (*http.Request, error) {
	pseudo, h, err := splitPseudo(fields, ":method", ":scheme", ":authority", ":path", ":protocol")
	if err != nil {
		return nil, err
	}
	method, scheme, authority, path := pseudo[":method"], pseudo[":scheme"], pseudo[":authority"], pseudo[":path"]
	if _, ok := pseudo[":protocol"]; ok {
		return nil, streamError(ErrCodeMessageError, ":protocol without extended CONNECT")
	}
	if method == "" || !httpguts.ValidHostHeader(authority) {
		return nil, streamError(ErrCodeMessageError, "missing or bad :method or :authority")
	}
	// RFC 9114 §4.3.1: "If the :scheme pseudo-header field identifies a
	// scheme that has a mandatory authority component (including "http" and
	// "https"), the request MUST contain either an :authority pseudo-header
	// field or a Host header field. ... If both fields are present, they
	// MUST contain the same value."
	host := h.Get("Host")
	if authority == "" {
		authority = host
	} else if host != "" && host != authority {
		return nil, streamError(ErrCodeMessageError, ":authority %q and Host %q differ", authority, host)
	}
	var u *url.URL
	if method == http.MethodConnect {
		// §4.4: "The :scheme and :path pseudo-header fields are omitted";
		// :authority is required.
		if scheme != "" || path != "" || authority == "" {
			return nil, streamError(ErrCodeMessageError, "malformed CONNECT")
		}
		u = &url.URL{Host: authority}
	} else {
		// §4.3.1: "All HTTP/3 requests MUST include exactly one value for
		// the :method, :scheme, and :path pseudo-header fields, unless the
		// request is a CONNECT request".
		if scheme == "" || path == "" {
			return nil, streamError(ErrCodeMessageError, "missing :scheme or :path")
		}
		if (scheme == "http" || scheme == "https") && authority == "" {
			return nil, streamError(ErrCodeMessageError, "no :authority or Host")
		}
		if path != "*" && path[0] != '/' || method != http.MethodOptions && path == "*" {
			return nil, streamError(ErrCodeMessageError, "bad :path %q", path)
		}
		if u, err = url.ParseRequestURI(path); err != nil {
			return nil, streamError(ErrCodeMessageError, "bad :path %q", path)
		}
		u.Scheme, u.Host = scheme, authority
	}
	n, err := contentLength(h)
	if err != nil {
		return nil, err
	}
	h.Del("Host")
	req := &http.Request{
		Method:        method,
		URL:           u,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        h,
		Host:          authority,
		RequestURI:    path,
		ContentLength: n,
	}
	if method == http.MethodConnect {
		req.RequestURI = authority
	}
	// Declared trailers (RFC 9110 §6.6.2), filled in when they arrive.
	for _, v := range h.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				if req.Trailer == nil {
					req.Trailer = make(http.Header)
				}
				req.Trailer[k] = nil
			}
		}
	}
	return req, nil
}

// responseFromFields builds a client-side response from a header section
// (RFC 9114 §4.3.2).
func responseFromFields(fields []qpack.HeaderField) (*http.Response, error) {
	pseudo, h, err := splitPseudo(fields, ":status")
	if err != nil {
		return nil, err
	}
	st := pseudo[":status"]
	code, err := strconv.Atoi(st)
	if err != nil || len(st) != 3 || code < 100 {
		return nil, streamError(ErrCodeMessageError, "bad :status %q", st)
	}
	n, err := contentLength(h)
	if err != nil {
		return nil, err
	}
	resp := &http.Response{
		Status:        st + " " + http.StatusText(code),
		StatusCode:    code,
		Proto:         "HTTP/3.0",
		ProtoMajor:    3,
		Header:        h,
		ContentLength: n,
	}
	for _, v := range h.Values("Trailer") {
		for _, k := range strings.Split(v, ",") {
			if k = http.CanonicalHeaderKey(strings.TrimSpace(k)); k != "" {
				if resp.Trailer == nil {
					resp.Trailer = make(http.Header)
				}
				resp.Trailer[k] = nil
			}
		}
	}
	return resp, nil
}

// encoder writes QPACK field sections without a dynamic table.
type encoder struct {
	buf bytes.Buffer
	enc *qpack.Encoder
}

func newEncoder() *encoder {
	e := &encoder{}
	e.enc = qpack.NewEncoder(&e.buf)
	return e
}

func (e *encoder) field(name, value string) {
	e.enc.WriteField(qpack.HeaderField{Name: name, Value: value})
}

// header writes h's fields with lowercase names, leaving out
// connection-specific fields (RFC 9114 §4.2) and the skipped ones.
func (e *encoder) header(h http.Header, skip func(k string) bool) {
	for k, vs := range h {
		lk := strings.ToLower(k)
		if connectionHeaders[lk] || (skip != nil && skip(k)) || !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range vs {
			if lk == "te" && v != "trailers" || !httpguts.ValidHeaderFieldValue(v) {
				continue
			}
			e.field(lk, v)
		}
	}
}

// frame returns the HEADERS frame of the fields written so far.
func (e *encoder) frame() []byte {
	e.enc.Close()
	return appendFrame(nil, frameHeaders, e.buf.Bytes())
}

// qpackField is a decoded field.
type qpackField = qpack.HeaderField
