package h3

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quic-go/quic-go/quicvarint"
)

// Unidirectional stream types (RFC 9114 §6.2, RFC 9204 §4.2).
const (
	streamControl      = 0x0
	streamPush         = 0x1
	streamQPACKEncoder = 0x2
	streamQPACKDecoder = 0x3
)

// Bounds of the unidirectional streams a peer opens.
const (
	streamTypeTimeout    = 10 * time.Second // a peer's unidirectional stream must name its type within this
	maxControlFrame      = 4 << 10          // largest GOAWAY, PRIORITY_UPDATE, ... accepted on the control stream (bytes)
	maxPendingPriorities = 64               // PRIORITY_UPDATEs kept for request streams not yet open
)

// conn is the HTTP/3 state of one connection shared by client and server:
// the control streams and what the peer's control stream said. Goroutines:
// one accepting unidirectional streams, one per open peer unidirectional
// stream (at most the transport's unidirectional credit).
type conn struct {
	c        Conn
	isServer bool
	maxField int // our field section limit (bytes), announced in SETTINGS

	ctrlMu sync.Mutex // serializes writes to ctrl
	ctrl   SendStream // our control stream

	settingsRcvd chan struct{} // closed when the peer's SETTINGS arrived
	peer         settings      // valid after settingsRcvd

	uniMu   sync.Mutex
	uniSeen [4]bool // a peer stream of each critical type was opened

	goAwayMu  sync.Mutex
	goAwayID  uint64        // the peer's last GOAWAY ID (valid once goAwayRcv is closed)
	goAwayRcv chan struct{} // closed at the peer's first GOAWAY

	onPriority func(id uint64, p Priority) // server: a PRIORITY_UPDATE arrived

	closed atomic.Bool
}

func newConn(c Conn, isServer bool, maxField int) *conn {
	return &conn{
		c: c, isServer: isServer, maxField: maxField,
		settingsRcvd: make(chan struct{}),
		goAwayRcv:    make(chan struct{}),
	}
}

// start opens our control stream with SETTINGS and starts accepting the
// peer's unidirectional streams.
func (h *conn) start() error {
	ctrl, err := h.c.OpenUniStream()
	if err != nil {
		return err
	}
	h.ctrl = ctrl
	// Control frames (SETTINGS, GOAWAY, PRIORITY_UPDATE) go before any
	// response data queued at the same time.
	applyPriority(ctrl, Priority{Urgency: 0})
	b := quicvarint.Append(nil, streamControl)
	b = appendSettings(b, h.maxField)
	if err := h.writeControl(b); err != nil {
		return err
	}
	go h.acceptUni()
	return nil
}

// writeControl writes b on our control stream, bounded by writeTimeout.
func (h *conn) writeControl(b []byte) error {
	h.ctrlMu.Lock()
	defer h.ctrlMu.Unlock()
	h.ctrl.SetWriteDeadline(time.Now().Add(controlWriteTimeout))
	_, err := h.ctrl.Write(b)
	return err
}

// controlWriteTimeout bounds a write on the control stream.
const controlWriteTimeout = 10 * time.Second

// fail closes the connection with err's code (a connection error).
func (h *conn) fail(err *Error) {
	if h.closed.Swap(true) {
		return
	}
	h.c.CloseWithError(uint64(err.Code), err.Reason)
}

// failWith closes the connection for err: an *Error's code, or
// H3_GENERAL_PROTOCOL_ERROR.
func (h *conn) failWith(err error) {
	var he *Error
	if !errors.As(err, &he) {
		he = connError(ErrCodeGeneralProtocolError, "%v", err)
	}
	h.fail(he)
}

func (h *conn) acceptUni() {
	for {
		rs, err := h.c.AcceptUniStream(h.c.Context())
		if err != nil {
			return
		}
		go h.handleUni(rs)
	}
}

// handleUni reads a peer's unidirectional stream type and serves it.
func (h *conn) handleUni(rs ReceiveStream) {
	rs.SetReadDeadline(time.Now().Add(streamTypeTimeout))
	fr := newFrameReader(rs)
	typ, err := quicvarint.Read(fr.r)
	if err != nil {
		rs.CancelRead(uint64(ErrCodeStreamCreationError))
		return
	}
	switch typ {
	case streamControl, streamQPACKEncoder, streamQPACKDecoder:
		h.uniMu.Lock()
		dup := h.uniSeen[typ]
		h.uniSeen[typ] = true
		h.uniMu.Unlock()
		if dup {
			// RFC 9114 §6.2.1: "Receipt of a second stream claiming to be a
			// control stream MUST be treated as a connection error of type
			// H3_STREAM_CREATION_ERROR"; RFC 9204 §4.2 says the same of the
			// encoder and decoder streams.
			h.fail(connError(ErrCodeStreamCreationError, "second stream of type %#x", typ))
			return
		}
		rs.SetReadDeadline(time.Time{}) // critical streams live as long as the connection
		if typ == streamControl {
			err = h.readControl(fr)
		} else {
			// A dynamic table of capacity 0: the peer's QPACK instructions
			// carry nothing we use; discard them (bounded by the buffer).
			err = fr.skip(1 << 62)
		}
		if h.c.Context().Err() != nil {
			return
		}
		var he *Error
		if err == nil || !errors.As(err, &he) || he.Stream {
			// RFC 9114 §6.2.1: "If either control stream is closed at any
			// point, this MUST be treated as a connection error of type
			// H3_CLOSED_CRITICAL_STREAM."
			he = connError(ErrCodeClosedCriticalStream, "peer closed critical stream %#x", typ)
		}
		h.fail(he)
	case streamPush:
		if h.isServer {
			// RFC 9114 §6.2.2: "Only servers can push; if a server receives
			// a client-initiated push stream, this MUST be treated as a
			// connection error of type H3_STREAM_CREATION_ERROR."
			h.fail(connError(ErrCodeStreamCreationError, "client opened a push stream"))
		} else {
			// We never send MAX_PUSH_ID, so any push ID exceeds it (§4.6:
			// H3_ID_ERROR).
			h.fail(connError(ErrCodeIDError, "push without MAX_PUSH_ID"))
		}
	default:
		// RFC 9114 §6.2: "Recipients of unknown stream types MUST either
		// abort reading of the stream or discard incoming data".
		rs.CancelRead(uint64(ErrCodeStreamCreationError))
	}
}

// readControl serves the peer's control stream until it ends or errs.
func (h *conn) readControl(fr *frameReader) error {
	hdr, err := fr.next()
	if err != nil {
		return err // io.EOF: the caller reports H3_CLOSED_CRITICAL_STREAM
	}
	if hdr.typ != frameSettings {
		// RFC 9114 §6.2.1: "If the first frame of the control stream is any
		// other frame type, this MUST be treated as a connection error of
		// type H3_MISSING_SETTINGS."
		return connError(ErrCodeMissingSettings, "control stream began with %s", frameName(hdr.typ))
	}
	p, err := fr.payload(hdr.len, maxSettingsFrame, connError(ErrCodeExcessiveLoad, "SETTINGS frame too large"))
	if err != nil {
		return err
	}
	s, err := parseSettings(p)
	if err != nil {
		return err
	}
	h.peer = s
	close(h.settingsRcvd)
	for {
		hdr, err := fr.next()
		if err != nil {
			return err // io.EOF between frames: H3_CLOSED_CRITICAL_STREAM
		}
		switch {
		case hdr.typ == frameSettings:
			// §7.2.4: "If an endpoint receives a second SETTINGS frame on
			// the control stream, the endpoint MUST respond with a
			// connection error of type H3_FRAME_UNEXPECTED."
			return connError(ErrCodeFrameUnexpected, "second SETTINGS frame")
		case hdr.typ == frameData || hdr.typ == frameHeaders || hdr.typ == framePushPromise || isHTTP2Frame(hdr.typ),
			hdr.typ == frameMaxPushID && !h.isServer,
			(hdr.typ == framePriorityUpdate || hdr.typ == framePriorityPush) && !h.isServer:
			// §7.2.1, §7.2.2, §7.2.5, §7.2.7, §7.2.8: not allowed on a
			// control stream (or not from this peer): H3_FRAME_UNEXPECTED.
			return connError(ErrCodeFrameUnexpected, "%s on the control stream", frameName(hdr.typ))
		case hdr.typ == frameGoAway, hdr.typ == frameMaxPushID, hdr.typ == frameCancelPush,
			hdr.typ == framePriorityUpdate, hdr.typ == framePriorityPush:
			p, err := fr.payload(hdr.len, maxControlFrame, connError(ErrCodeExcessiveLoad, "%s frame too large", frameName(hdr.typ)))
			if err != nil {
				return err
			}
			if err := h.controlFrame(hdr.typ, p); err != nil {
				return err
			}
		default: // unknown (grease): RFC 9114 §9, discard
			if err := fr.skip(hdr.len); err != nil {
				return err
			}
		}
	}
}

// controlFrame handles one known frame of the control stream.
func (h *conn) controlFrame(typ uint64, p []byte) error {
	switch typ {
	case frameGoAway:
		id, err := parseVarint(p, "GOAWAY")
		if err != nil {
			return err
		}
		if h.isServer {
			return nil // a client's GOAWAY names push IDs; we never push
		}
		// RFC 9114 §5.2: the ID "is a client-initiated bidirectional stream
		// ID ... A client MUST treat receipt of a GOAWAY frame containing a
		// stream ID of any other type as a connection error of type
		// H3_ID_ERROR"; "An endpoint MUST NOT ... increase the value"
		// (receiving a larger one is H3_ID_ERROR).
		if id%4 != 0 {
			return connError(ErrCodeIDError, "GOAWAY with stream ID %d", id)
		}
		h.goAwayMu.Lock()
		defer h.goAwayMu.Unlock()
		select {
		case <-h.goAwayRcv:
			if id > h.goAwayID {
				return connError(ErrCodeIDError, "GOAWAY ID grew from %d to %d", h.goAwayID, id)
			}
			h.goAwayID = id
		default:
			h.goAwayID = id
			close(h.goAwayRcv)
		}
	case framePriorityUpdate:
		u, err := parsePriorityUpdate(p)
		if err != nil {
			return err
		}
		// RFC 9218 §7.1: a PRIORITY_UPDATE naming anything but a
		// client-initiated bidirectional stream is H3_ID_ERROR.
		if u.id%4 != 0 {
			return connError(ErrCodeIDError, "PRIORITY_UPDATE for stream %d", u.id)
		}
		if h.onPriority != nil {
			h.onPriority(u.id, ParsePriority(u.value, DefaultPriority))
		}
	case framePriorityPush, frameCancelPush, frameMaxPushID:
		if _, _, err := quicvarint.Parse(p); err != nil {
			return connError(ErrCodeFrameError, "malformed %s frame", frameName(typ))
		}
		// We never push: nothing to do.
	}
	return nil
}

// goingAway reports whether the peer sent GOAWAY, and its ID.
func (h *conn) goingAway() (uint64, bool) {
	select {
	case <-h.goAwayRcv:
		h.goAwayMu.Lock()
		defer h.goAwayMu.Unlock()
		return h.goAwayID, true
	default:
		return 0, false
	}
}

// peerMaxField is the peer's field section limit once its SETTINGS
// arrived (0: none known).
func (h *conn) peerMaxField() uint64 {
	select {
	case <-h.settingsRcvd:
		return h.peer.maxFieldSectionSize
	default:
		return 0
	}
}

// sendGoAway sends a GOAWAY frame with id.
func (h *conn) sendGoAway(id uint64) error {
	return h.writeControl(appendFrame(nil, frameGoAway, quicvarint.Append(nil, id)))
}
