package h3

import (
	"github.com/quic-go/quic-go/quicvarint"
)

// Setting identifiers (RFC 9114 §7.2.4.1, RFC 9204 §5).
const (
	settingQPACKMaxTableCapacity = 0x1
	settingMaxFieldSectionSize   = 0x6
	settingQPACKBlockedStreams   = 0x7
)

// isHTTP2Setting reports the identifiers reserved from HTTP/2: "receipt ...
// MUST be treated as a connection error of type H3_SETTINGS_ERROR" (RFC
// 9114 §7.2.4.1).
func isHTTP2Setting(id uint64) bool { return id == 0x0 || (id >= 0x2 && id <= 0x5) }

// maxSettingsFrame bounds a SETTINGS frame's payload (bytes); a larger one
// is H3_EXCESSIVE_LOAD. 4 KiB holds hundreds of settings.
const maxSettingsFrame = 4 << 10

// settings is what a peer announced.
type settings struct {
	maxFieldSectionSize uint64 // the largest field section it accepts (bytes); 0: no limit announced
}

// appendSettings appends this end's SETTINGS frame: a field section limit
// and a QPACK dynamic table of capacity 0 (no dynamic table, RFC 9204 §3.2.3,
// so no blocked streams either; both are the defaults, sent for clarity).
func appendSettings(b []byte, maxFieldSection int) []byte {
	var p []byte
	p = quicvarint.Append(p, settingMaxFieldSectionSize)
	p = quicvarint.Append(p, uint64(maxFieldSection))
	p = quicvarint.Append(p, settingQPACKMaxTableCapacity)
	p = quicvarint.Append(p, 0)
	p = quicvarint.Append(p, settingQPACKBlockedStreams)
	p = quicvarint.Append(p, 0)
	return appendFrame(b, frameSettings, p)
}

// parseSettings reads a SETTINGS payload. "The same setting identifier MUST
// NOT occur more than once in the SETTINGS frame. A receiver MAY treat the
// presence of duplicate setting identifiers as a connection error of type
// H3_SETTINGS_ERROR" (RFC 9114 §7.2.4); unknown identifiers are ignored
// (§7.2.4.1: "Endpoints MUST NOT consider such settings to have any
// meaning upon receipt").
func parseSettings(p []byte) (settings, error) {
	var s settings
	seen := make(map[uint64]bool)
	for len(p) > 0 {
		id, n, err := quicvarint.Parse(p)
		if err != nil {
			return s, connError(ErrCodeFrameError, "malformed SETTINGS frame")
		}
		p = p[n:]
		v, n, err := quicvarint.Parse(p)
		if err != nil {
			return s, connError(ErrCodeFrameError, "malformed SETTINGS frame")
		}
		p = p[n:]
		if seen[id] {
			return s, connError(ErrCodeSettingsError, "duplicate setting %#x", id)
		}
		seen[id] = true
		if isHTTP2Setting(id) {
			return s, connError(ErrCodeSettingsError, "HTTP/2 setting %#x", id)
		}
		if id == settingMaxFieldSectionSize {
			s.maxFieldSectionSize = v
		}
	}
	return s, nil
}
