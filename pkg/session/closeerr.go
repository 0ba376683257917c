package session

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/quic-go/quic-go"
)

// ApplicationErrorCode is the code an application closes a session with
// (CloseWithError). Its meaning is the application's; the session never
// sends one of its own. As in QUIC (RFC 9000 §20.2), codes are below 2^62.
type ApplicationErrorCode uint64

// ApplicationError is a session ended by an application's CloseWithError,
// this end's (Remote false) or the peer's (Remote true). Err, Context's
// cause and every blocked call of the session return it.
//
// Errors the session raises itself (a protocol violation, a timeout, a
// refusal; see the Err… variables) are never an *ApplicationError, as
// quic-go keeps its *TransportError apart from its *ApplicationError: this
// end's are the Err… sentinels (test them with errors.Is); a peer's reach
// this end as ErrNoPaths joined with the path connection's
// *quic.ApplicationError, whose code is the session's internal code.
type ApplicationError struct {
	Code   ApplicationErrorCode // the application's code, as given to CloseWithError
	Reason string               // the first 512 bytes (cut at a UTF-8 boundary) travel to the peer
	Remote bool                 // the peer closed the session
}

// Error describes the close, e.g. "session: closed by peer: application
// error 0x2a: bye".
func (e *ApplicationError) Error() string {
	who := "closed"
	if e.Remote {
		who = "closed by peer"
	}
	if e.Reason == "" {
		return fmt.Sprintf("session: %s: application error %#x", who, uint64(e.Code))
	}
	return fmt.Sprintf("session: %s: application error %#x: %s", who, uint64(e.Code), e.Reason)
}

// Is matches another *ApplicationError with the same code and side, so that
// errors.Is(err, &ApplicationError{Code: 7, Remote: true}) tests for the
// peer's code 7 whatever its reason.
func (e *ApplicationError) Is(target error) bool {
	t, ok := target.(*ApplicationError)
	return ok && t.Code == e.Code && t.Remote == e.Remote
}

// How an application's close travels (the encoding of codeApplication).
//
// Every path connection is closed with QUIC's CONNECTION_CLOSE of type
// 0x1d (an application close), whose error code is one of the session's
// internal codes (session.go). An application's close uses internal code
// codeApplication and puts the application's code in the reason phrase:
// the code in decimal, one space, then the application's reason, cut to
// maxCloseReason bytes (at a UTF-8 boundary). Each path carries the same
// close, so it arrives as long as one path does; quic-go retransmits it in
// answer to the peer's packets while the sockets drain (lifecycle.go).
const (
	codeApplication quic.ApplicationErrorCode = 9 // the application closed the session; the reason holds its code
	maxCloseReason                            = 512
)

// A clean close (Close, codeNoError) says how much arrived: its reason
// phrase is "closed; received N", N the number of segments (sequence
// numbers 0 to N−1) received in order. The peer takes them as acknowledged
// when it decides whether its data all arrived (finding 3), so a final Ack
// that was lost does not turn a complete transfer into an error. A reason
// without it (an older peer) is read as N = 0.
const cleanClosePrefix = "closed; received "

func cleanCloseReason(next uint64) string {
	return cleanClosePrefix + strconv.FormatUint(next, 10)
}

// receivedBelow is N from a clean close's reason, or 0 if it has none or
// one above sent (the sequence numbers this end used).
func receivedBelow(reason string, sent uint64) uint64 {
	num, ok := strings.CutPrefix(reason, cleanClosePrefix)
	if !ok {
		return 0
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > sent {
		return 0
	}
	return n
}

// appCloseReason is the reason phrase carrying e (see codeApplication).
func appCloseReason(e *ApplicationError) string {
	return strconv.FormatUint(uint64(e.Code), 10) + " " + cutReason(e.Reason, maxCloseReason)
}

// parseAppClose decodes the peer's application close from the reason
// phrase of a codeApplication close; a malformed one is a protocol error.
func parseAppClose(reason string) error {
	num, text, _ := strings.Cut(reason, " ")
	code, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return errors.Join(ErrProtocol, fmt.Errorf("malformed application close %.40q", reason))
	}
	return &ApplicationError{Code: ApplicationErrorCode(code), Reason: text, Remote: true}
}

// peerCloseCode reports whether err is the peer closing the whole session
// (not one path): its clean close (codeNoError) or an application's close.
func peerCloseCode(err error) (*quic.ApplicationError, bool) {
	var ae *quic.ApplicationError
	if errors.As(err, &ae) && ae.Remote && (ae.ErrorCode == codeNoError || ae.ErrorCode == codeApplication) {
		return ae, true
	}
	return nil, false
}

// CloseWithError aborts the session at once with an application's code and
// reason, without waiting for data to be acknowledged: the peer's Err, and
// its blocked calls, return &ApplicationError{Code: code, Reason: reason,
// Remote: true}; this end's return the same with Remote false. Only the
// first close counts. It returns once the session's goroutines have
// stopped; it is safe for concurrent use, and returns nil.
func (s *Session) CloseWithError(code ApplicationErrorCode, reason string) error {
	s.mu.Lock()
	s.closeLocked(&ApplicationError{Code: code, Reason: reason}, codeApplication)
	s.mu.Unlock()
	s.waitClosed()
	return nil
}

// protocolErr makes err a connection error of the peer's (ErrProtocol),
// with ErrProtocol's text once: an error that already is one is returned
// as it is (issue 29: a close reason read "session: protocol violation by
// peer: session: protocol violation by peer: …").
func protocolErr(err error) error {
	if errors.Is(err, ErrProtocol) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrProtocol, err)
}
