package h3

import (
	"bytes"
	"errors"
	"testing"

	"github.com/quic-go/quic-go/quicvarint"
)

func settingsPayload(kv ...uint64) []byte {
	var p []byte
	for _, v := range kv {
		p = quicvarint.Append(p, v)
	}
	return p
}

// SETTINGS validation (RFC 9114 §7.2.4).
func TestParseSettings(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		code ErrCode // 0: valid
		max  uint64
	}{
		{"ours", appendSettings(nil, 5000)[2:], 0, 5000},
		{"unknown ignored", settingsPayload(0x21, 7, settingMaxFieldSectionSize, 9), 0, 9},
		// "The same setting identifier MUST NOT occur more than once".
		{"duplicate", settingsPayload(0x21, 1, 0x21, 2), ErrCodeSettingsError, 0},
		// §7.2.4.1: HTTP/2 identifiers "MUST be treated as a connection
		// error of type H3_SETTINGS_ERROR".
		{"HTTP/2 setting 0x2", settingsPayload(0x2, 1), ErrCodeSettingsError, 0},
		{"HTTP/2 setting 0x5", settingsPayload(0x5, 1), ErrCodeSettingsError, 0},
		{"truncated", []byte{0x6}, ErrCodeFrameError, 0},
	}
	for _, tc := range tests {
		s, err := parseSettings(tc.in)
		var he *Error
		switch {
		case tc.code == 0 && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.code == 0 && s.maxFieldSectionSize != tc.max:
			t.Errorf("%s: max field section %d, want %d", tc.name, s.maxFieldSectionSize, tc.max)
		case tc.code != 0 && (!errors.As(err, &he) || he.Code != tc.code || he.Stream):
			t.Errorf("%s: error %v, want connection error %v", tc.name, err, tc.code)
		}
	}
}

// The control stream's rules (RFC 9114 §6.2.1, §7.2.4, §5.2), read by a
// client.
func TestControlStream(t *testing.T) {
	settings := appendSettings(nil, 100)
	goaway := func(id uint64) []byte { return appendFrame(nil, frameGoAway, quicvarint.Append(nil, id)) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	tests := []struct {
		name string
		in   []byte
		code ErrCode
	}{
		{"ends: closed critical stream", settings, ErrCodeClosedCriticalStream},
		{"no SETTINGS first", goaway(0), ErrCodeMissingSettings},
		{"second SETTINGS", cat(settings, settings), ErrCodeFrameUnexpected},
		{"DATA", cat(settings, appendFrame(nil, frameData, nil)), ErrCodeFrameUnexpected},
		{"HEADERS", cat(settings, appendFrame(nil, frameHeaders, nil)), ErrCodeFrameUnexpected},
		{"HTTP/2 frame 0x6", cat(settings, appendFrame(nil, 0x6, nil)), ErrCodeFrameUnexpected},
		{"MAX_PUSH_ID to a client", cat(settings, appendFrame(nil, frameMaxPushID, []byte{0})), ErrCodeFrameUnexpected},
		// §5.2: "A client MUST treat receipt of a GOAWAY frame containing a
		// stream ID of any other type as a connection error of type
		// H3_ID_ERROR"; the ID may not grow.
		{"GOAWAY of a uni stream", cat(settings, goaway(2)), ErrCodeIDError},
		{"GOAWAY grows", cat(settings, goaway(4), goaway(8)), ErrCodeIDError},
		{"GOAWAY shrinks, then ends", cat(settings, goaway(8), goaway(4)), ErrCodeClosedCriticalStream},
		{"GOAWAY malformed", cat(settings, appendFrame(nil, frameGoAway, []byte{0, 0})), ErrCodeFrameError},
		{"grease ignored, then ends", cat(settings, appendFrame(nil, 0x21, []byte("xyz"))), ErrCodeClosedCriticalStream},
		{"truncated frame", cat(settings, []byte{0x7, 0x5, 0x1}), ErrCodeFrameError},
	}
	for _, tc := range tests {
		h := newConn(nil, false, 100)
		err := h.readControl(newFrameReader(bytes.NewReader(tc.in)))
		var he *Error
		if err == nil || !errors.As(err, &he) {
			he = connError(ErrCodeClosedCriticalStream, "")
		}
		if he.Code != tc.code {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.code)
		}
	}
}
