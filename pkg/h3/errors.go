package h3

import (
	"errors"
	"fmt"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// ErrCode is an HTTP/3 error code (RFC 9114 §8.1), carried by a stream
// reset (RESET_STREAM, STOP_SENDING) or a connection close.
type ErrCode uint64

// The HTTP/3 error codes of RFC 9114 §8.1 and the QPACK one of RFC 9204 §6.
const (
	ErrCodeNoError              ErrCode = 0x100 // H3_NO_ERROR: nothing went wrong
	ErrCodeGeneralProtocolError ErrCode = 0x101 // H3_GENERAL_PROTOCOL_ERROR
	ErrCodeInternalError        ErrCode = 0x102 // H3_INTERNAL_ERROR
	ErrCodeStreamCreationError  ErrCode = 0x103 // H3_STREAM_CREATION_ERROR
	ErrCodeClosedCriticalStream ErrCode = 0x104 // H3_CLOSED_CRITICAL_STREAM
	ErrCodeFrameUnexpected      ErrCode = 0x105 // H3_FRAME_UNEXPECTED
	ErrCodeFrameError           ErrCode = 0x106 // H3_FRAME_ERROR
	ErrCodeExcessiveLoad        ErrCode = 0x107 // H3_EXCESSIVE_LOAD
	ErrCodeIDError              ErrCode = 0x108 // H3_ID_ERROR
	ErrCodeSettingsError        ErrCode = 0x109 // H3_SETTINGS_ERROR
	ErrCodeMissingSettings      ErrCode = 0x10a // H3_MISSING_SETTINGS
	ErrCodeRequestRejected      ErrCode = 0x10b // H3_REQUEST_REJECTED
	ErrCodeRequestCancelled     ErrCode = 0x10c // H3_REQUEST_CANCELLED
	ErrCodeRequestIncomplete    ErrCode = 0x10d // H3_REQUEST_INCOMPLETE
	ErrCodeMessageError         ErrCode = 0x10e // H3_MESSAGE_ERROR
	ErrCodeConnectError         ErrCode = 0x10f // H3_CONNECT_ERROR
	ErrCodeVersionFallback      ErrCode = 0x110 // H3_VERSION_FALLBACK

	ErrCodeQPACKDecompressionFailed ErrCode = 0x200 // QPACK_DECOMPRESSION_FAILED (RFC 9204 §6)
)

var codeNames = map[ErrCode]string{
	ErrCodeNoError:                  "H3_NO_ERROR",
	ErrCodeGeneralProtocolError:     "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternalError:            "H3_INTERNAL_ERROR",
	ErrCodeStreamCreationError:      "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream:     "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:          "H3_FRAME_UNEXPECTED",
	ErrCodeFrameError:               "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:            "H3_EXCESSIVE_LOAD",
	ErrCodeIDError:                  "H3_ID_ERROR",
	ErrCodeSettingsError:            "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:          "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:          "H3_REQUEST_REJECTED",
	ErrCodeRequestCancelled:         "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:        "H3_REQUEST_INCOMPLETE",
	ErrCodeMessageError:             "H3_MESSAGE_ERROR",
	ErrCodeConnectError:             "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:          "H3_VERSION_FALLBACK",
	ErrCodeQPACKDecompressionFailed: "QPACK_DECOMPRESSION_FAILED",
}

// String names the code, e.g. "H3_MESSAGE_ERROR", or gives it in hex.
func (c ErrCode) String() string {
	if n, ok := codeNames[c]; ok {
		return n
	}
	return fmt.Sprintf("H3 error %#x", uint64(c))
}

// Error is an HTTP/3 error: a stream error (Stream true: only one request
// failed) or a connection error (the connection is closed with Code).
// Remote says the peer raised it. Errors of this package that concern the
// protocol are an *Error; test them with errors.As.
type Error struct {
	Code   ErrCode // the HTTP/3 error code (RFC 9114 §8.1)
	Stream bool    // a stream error; else a connection error
	Remote bool    // raised by the peer
	Reason string  // human-readable detail (sent with a connection close)
}

// Error describes the error, e.g. "h3: stream error H3_MESSAGE_ERROR: bad
// content-length".
func (e *Error) Error() string {
	kind := "connection"
	if e.Stream {
		kind = "stream"
	}
	who := ""
	if e.Remote {
		who = " (remote)"
	}
	if e.Reason == "" {
		return fmt.Sprintf("h3: %s error %v%s", kind, e.Code, who)
	}
	return fmt.Sprintf("h3: %s error %v%s: %s", kind, e.Code, who, e.Reason)
}

// Is matches an *Error with the same code, kind and side, whatever its
// reason.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && t.Stream == e.Stream && t.Remote == e.Remote
}

func connError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Reason: fmt.Sprintf(format, args...)}
}

func streamError(code ErrCode, format string, args ...any) *Error {
	return &Error{Code: code, Stream: true, Reason: fmt.Sprintf(format, args...)}
}

// ErrGoAway is returned by RoundTrip for a request the server refused
// before processing it (its GOAWAY, or H3_REQUEST_REJECTED). The Transport
// retries such a request once on a new connection when its body can be
// replayed (no body, or GetBody), so callers see it only when that is
// impossible.
var ErrGoAway = errors.New("h3: connection is going away")

// streamResetCode reports the application code of a stream reset seen by a
// Read or Write of either transport (*session.StreamError or
// *quic.StreamError).
func streamResetCode(err error) (code uint64, remote, ok bool) {
	var se *session.StreamError
	if errors.As(err, &se) {
		return se.ErrorCode, se.Remote, true
	}
	var qe *quic.StreamError
	if errors.As(err, &qe) {
		return uint64(qe.ErrorCode), qe.Remote, true
	}
	return 0, false, false
}

// connCloseCode reports the application code of a closed connection of
// either transport.
func connCloseCode(err error) (code uint64, remote, ok bool) {
	var se *session.ApplicationError
	if errors.As(err, &se) {
		return uint64(se.Code), se.Remote, true
	}
	var qe *quic.ApplicationError
	if errors.As(err, &qe) {
		return uint64(qe.ErrorCode), qe.Remote, true
	}
	return 0, false, false
}

// translate turns a transport's stream or connection error into an *Error
// when it carries an HTTP/3 code, and leaves other errors alone.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var he *Error
	if errors.As(err, &he) {
		return err
	}
	if c, remote, ok := streamResetCode(err); ok {
		return &Error{Code: ErrCode(c), Stream: true, Remote: remote, Reason: err.Error()}
	}
	if c, remote, ok := connCloseCode(err); ok {
		return &Error{Code: ErrCode(c), Remote: remote, Reason: err.Error()}
	}
	return err
}
