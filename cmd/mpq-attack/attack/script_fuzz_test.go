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

// FuzzH3ServerScript plays arbitrary scripts of requests, data after their
// end, malformed records, datagrams, resets, stops, pauses and closes
// (attack.RunScript) against h3.Server over a session listener in this
// process (issue 29 item 2: "Fuzz and load the server with its HTTP/3
// handler running ... in every order, and assert that the process
// survives"). A panic anywhere in the server, the handler's goroutines
// included, fails the target; at the end the server must still serve a
// plain GET with the right bytes. The seeds are the crash cases of issue
// 29 and one of each op.
func FuzzH3ServerScript(f *testing.F) {
	if attack.Version() < 3 {
		f.Skip("no HTTP/3 before protocol version 3")
	}
	o := serveH3(f)
	o.Duration = 5 * time.Second
	// Op bytes: 0 raw segment, 1 data, 2 fin, 3 datagram, 4 reset, 5 request,
	// 6 stop, 7 close, 8 wait (see attack.RunScript).
	f.Add([]byte{1, 1, 'x'})              // one data byte after the GET's FIN (crashed a8db118)
	f.Add([]byte{3, 0})                   // an empty datagram (crashed a8db118)
	f.Add([]byte{4, 1, 0x0c, 5, 7})       // reset, another request, close
	f.Add([]byte{6, 0, 8, 1, 5, 2, 2})    // stop, wait, request, two FINs
	f.Add([]byte{0, 3, 0x01, 0x00, 0x05}) // a malformed record
	f.Add([]byte{5, 5, 5, 5, 3, 2, 0x3f, 0x00, 7})
	tr := &h3.Transport{Dial: h3.SessionDialer(o.TLS, nil)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	f.Fuzz(func(t *testing.T, script []byte) {
		if len(script) > 256 {
			script = script[:256] // bounded: one session's worth
		}
		if err := attack.RunScript(context.Background(), o, script); err != nil {
			t.Logf("script %x: %v", script, err) // a dial that failed under load is no finding
		}
		// The server still serves: one byte of /big by Range, on a
		// session of its own (the Transport keeps it between inputs).
		req, _ := http.NewRequest("GET", "https://"+o.Addr.String()+"/big", nil)
		req.Header.Set("Range", "bytes=7-7")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("script %x: GET afterwards: %v", script, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusPartialContent || len(b) != 1 {
			t.Fatalf("script %x: GET afterwards: status %d, %d bytes, %v; want 206 and 1", script, resp.StatusCode, len(b), err)
		}
	})
}
