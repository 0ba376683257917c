package attack_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/h3"
)

// Issue 29: "A client sends a complete HTTP/3 GET on stream 0, with FIN,
// and then one more data byte on stream 0 in the same segment. The session
// closes with a protocol violation, as it should. Then the HTTP/3 handler
// goroutine panics, and the whole mpquic-server process exits." Every
// follow-up of a complete request, violation or not, leaves the server
// serving: violations end their session with a connection error, legal
// ones leave it open, and a plain GET afterwards gets its 4 MiB. At
// a8db118 this test binary died of the handler's nil-pointer panic.
func TestH3AfterRequestServerSurvives(t *testing.T) {
	if attack.Version() < 3 {
		t.Skip("no HTTP/3 before protocol version 3")
	}
	o := serveH3(t)
	o.Duration = 25 * time.Second
	want := map[string]string{
		"extra-byte":       "session 1", // a protocol violation: RFC 9000 §4.5, data beyond the final size
		"extra-byte-later": "session 1",
		"empty-datagram":   "session 1",
		"garbage-datagram": "session 1",
		"reset":            "open",
		"stop-sending":     "open",
		"close":            "client closed",
		"app-close":        "client closed",
	}
	for _, after := range attack.FollowUps {
		for round := 0; round < 3; round++ {
			r := attack.H3AfterRequest(context.Background(), o, after)
			if r.Sessions != int64(o.Sessions) || r.Answers[want[after]] != r.Sessions {
				t.Errorf("%s (round %d): %d sessions, answers %v; want %q on each of %d", after, round, r.Sessions, r.Answers, want[after], o.Sessions)
			}
		}
	}
	// The server still serves.
	tr := &h3.Transport{Dial: h3.SessionDialer(o.TLS, nil)}
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := c.Get("https://" + o.Addr.String() + "/big")
	if err != nil {
		t.Fatalf("GET after the attacks: %v", err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != 4<<20 || resp.StatusCode != 200 {
		t.Errorf("GET after the attacks: status %d, %d bytes, %v; want 200 and %d", resp.StatusCode, n, err, 4<<20)
	}
}
