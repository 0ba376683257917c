package session

import (
	"unicode/utf8"

	"github.com/quic-go/quic-go"
)

// closeConn is the one place where the package closes a QUIC connection,
// a session's path or a connection that never became one (a refused or
// failed handshake, a join that lost a race): issue 30, what to build,
// item 5, "Every path close goes through one function". It sends QUIC's
// CONNECTION_CLOSE with one of the session's codes (session.go) and the
// reason, cut to maxConnReason bytes at a UTF-8 boundary: an internal
// error's text can be long (errors.Join of several), and quic-go puts the
// whole phrase in one packet. quic-go's CloseWithError returns once the
// connection has stopped; callers that hold a lock run closeConn on a
// goroutine of its own. TestConnClosesInOneFunction checks that no other
// function of the package closes a connection.
func closeConn(c *quic.Conn, code quic.ApplicationErrorCode, reason string) {
	c.CloseWithError(code, cutReason(reason, maxConnReason))
}

// maxConnReason is the longest reason phrase closeConn sends, bytes: room
// for an application's close (its code in decimal, a space and
// maxCloseReason bytes, closeerr.go), which it never cuts.
const maxConnReason = maxCloseReason + 32

// cutReason cuts r to at most n bytes, back to the start of the rune that
// straddles the cut and no further: a reason that is not UTF-8 is cut at n.
func cutReason(r string, n int) string {
	if len(r) <= n {
		return r
	}
	i := n
	for i > n-utf8.UTFMax && !utf8.RuneStart(r[i]) {
		i--
	}
	if !utf8.RuneStart(r[i]) {
		i = n
	}
	return r[:i]
}
