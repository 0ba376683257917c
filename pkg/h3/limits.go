package h3

import "time"

// Defaults of the limits a peer cannot raise. Each applies per connection
// or per request as stated; zero in a Server or Transport field means the
// default.
const (
	// DefaultMaxHeaderBytes bounds a field section (headers or trailers)
	// this end accepts: the HEADERS frame's payload and the decoded size
	// (RFC 9114 §4.2.2: each field counts its name and value lengths plus
	// 32 bytes). Announced as SETTINGS_MAX_FIELD_SECTION_SIZE.
	DefaultMaxHeaderBytes = 64 << 10

	// DefaultMaxHeaderCount bounds the number of fields in one section.
	DefaultMaxHeaderCount = 128

	// DefaultMaxRequestBodyBytes bounds a request body a Server reads
	// (bytes); a longer one fails the handler's Read and resets the stream
	// with H3_EXCESSIVE_LOAD.
	DefaultMaxRequestBodyBytes = 64 << 20

	// DefaultHeaderTimeout bounds the wait for a request's (server) or a
	// response's (client) HEADERS frame.
	DefaultHeaderTimeout = 30 * time.Second

	// DefaultReadTimeout bounds each wait of a body Read for data.
	DefaultReadTimeout = 60 * time.Second

	// DefaultWriteTimeout bounds each wait of a body Write for the peer to
	// take data (flow-control credit): a peer that never reads fails the
	// Write after this long and its stream is reset.
	DefaultWriteTimeout = 30 * time.Second

	// DefaultIdleTimeout is how long a server connection may run no request
	// before the server closes it (Server.IdleTimeout). HTTP/3's control
	// streams stay open for the connection's life, so a transport's own
	// "no open stream" idle timer never fires under HTTP/3.
	DefaultIdleTimeout = 5 * time.Minute

	// DefaultDialTimeout bounds a Transport's Dial.
	DefaultDialTimeout = 30 * time.Second

	// DefaultMaxConcurrentRequests bounds the handlers running at once on
	// one server connection (the session's default stream credit).
	DefaultMaxConcurrentRequests = 256
)

// limits are the resolved limits of one endpoint.
type limits struct {
	maxHeaderBytes int
	maxHeaderCount int
	maxBody        int64
	headerTimeout  time.Duration
	readTimeout    time.Duration
	writeTimeout   time.Duration
}

func orInt(v, d int) int {
	if v <= 0 {
		return d
	}
	return v
}

func orInt64(v, d int64) int64 {
	switch {
	case v < 0:
		return 0 // no limit
	case v == 0:
		return d
	}
	return v
}

func orDur(v, d time.Duration) time.Duration {
	if v <= 0 {
		return d
	}
	return v
}

// writeBufSize is the response (or request) body buffer of each stream
// (bytes): writes gather into DATA frames of up to this size.
const writeBufSize = 32 << 10
