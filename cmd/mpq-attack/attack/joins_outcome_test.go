package attack

import (
	"context"
	"fmt"
	"testing"

	"github.com/quic-go/quic-go"
)

// TestJoinOutcome: a join refused by a server limit, whether the session's
// (codeRefused) or quic-go's full accept queue (CONNECTION_REFUSED at the
// dial), counts as "limit", apart from joins that got no answer or whose
// connection could not be opened for another reason.
func TestJoinOutcome(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{nil, "refused"},
		{&quic.ApplicationError{Remote: true, ErrorCode: codeRefused}, "limit"},
		{fmt.Errorf("%w: %w", errJoinNotSent, &quic.TransportError{Remote: true, ErrorCode: quic.ConnectionRefused}), "limit"},
		{fmt.Errorf("%w: %w", errJoinNotSent, context.DeadlineExceeded), "not sent"},
		{&quic.ApplicationError{Remote: false, ErrorCode: codeRefused}, "no answer"},
		{&quic.TransportError{Remote: true, ErrorCode: quic.ProtocolViolation}, "no answer"},
		{fmt.Errorf("attack: no answer to a join: %w", context.Canceled), "no answer"},
	} {
		if got := joinOutcome(c.err); got != c.want {
			t.Errorf("joinOutcome(%v) = %q, want %q", c.err, got, c.want)
		}
	}
}
