package session

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzAppClose covers the close-code record (closeerr.go): any reason phrase
// a peer sends decodes to an *ApplicationError or a protocol error, never a
// panic; and any code and reason the application gives travel intact, the
// reason cut to maxCloseReason bytes at a UTF-8 boundary.
func FuzzAppClose(f *testing.F) {
	f.Add(uint64(0), "", "0 ")
	f.Add(uint64(42), "bye", "42 bye")
	f.Add(uint64(1<<64-1), strings.Repeat("é", 400), "x y")
	f.Add(uint64(7), "a b c", "-1 y")
	f.Fuzz(func(t *testing.T, code uint64, reason, wire string) {
		err := parseAppClose(wire)
		var ae *ApplicationError
		if !errors.As(err, &ae) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("parseAppClose(%q) = %v: neither an application close nor a protocol error", wire, err)
		}
		sent := appCloseReason(&ApplicationError{Code: ApplicationErrorCode(code), Reason: reason})
		if !errors.As(parseAppClose(sent), &ae) {
			t.Fatalf("our own close %q does not decode", sent)
		}
		if uint64(ae.Code) != code || !ae.Remote || !strings.HasPrefix(reason, ae.Reason) {
			t.Fatalf("code %d reason %q came back as %+v", code, reason, *ae)
		}
		switch n := len(ae.Reason); {
		case len(reason) <= maxCloseReason && n != len(reason):
			t.Fatalf("reason of %d bytes (within the limit) came back with %d", len(reason), n)
		case len(reason) > maxCloseReason && (n > maxCloseReason || n <= maxCloseReason-utf8.UTFMax):
			t.Fatalf("reason of %d bytes cut to %d, want (%d, %d]: at most a rune below the limit", len(reason), n, maxCloseReason-utf8.UTFMax, maxCloseReason)
		}
		if utf8.ValidString(reason) && !utf8.ValidString(ae.Reason) {
			t.Fatalf("valid UTF-8 reason %q cut inside a rune: %q", reason, ae.Reason)
		}
	})
}
