package h3

import (
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// A response its handler has written whole but the client has not yet
// received is still a request for the client: Server.IdleTimeout must not
// cut it while its delivery progresses. Found by TestLoadHostile (issue 21
// item 7): under load one of 200 downloads of 10 MiB failed after 9,984,935
// bytes with the server's "H3_NO_ERROR: idle" close, 15 s (-idle-timeout)
// after its handler had returned with the tail still queued in the session.
//
// Here the handler writes 1 MiB and returns at once; the client reads 64 KiB
// every 2 s, so delivery takes about 30 s, three idle timeouts. The whole
// body must arrive. A client that stops reading altogether is closed
// within 2·IdleTimeout of its handler's return (one timeout to see the data
// pending, one with no progress), so a never-reading client cannot hold the
// connection for ever.
func TestIdleTimeoutSparesResponseInDelivery(t *testing.T) {
	const size = 1 << 20
	for _, stuck := range []bool{false, true} {
		synctest.Test(t, func(t *testing.T) {
			returned := make(chan time.Time, 1)
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write(make([]byte, size))
				returned <- time.Now()
			})
			b := newSessionBed(t, h, &Server{IdleTimeout: 10 * time.Second}, &session.Config{IdleTimeout: -1})
			defer b.close()
			req, _ := http.NewRequest("GET", "https://mp.test/x", nil)
			resp, err := b.tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var back time.Time
			select {
			case back = <-returned:
			case <-time.After(5 * time.Second):
				t.Skip("the handler did not return with its response buffered; the case does not arise")
			}
			s := <-b.dialed
			if stuck {
				select {
				case <-s.Done():
				case <-time.After(time.Minute):
					t.Fatal("a client that never reads held the connection for a minute (IdleTimeout 10 s)")
				}
				if d := time.Since(back); d < 10*time.Second || d > 21*time.Second {
					t.Errorf("the never-reading client's connection closed %v after its handler returned, want [10 s, 21 s]", d)
				}
				return
			}
			var n int64
			buf := make([]byte, 64<<10)
			for {
				k, err := io.ReadFull(resp.Body, buf)
				n += int64(k)
				if err != nil {
					break
				}
				time.Sleep(2 * time.Second)
			}
			if n != size {
				t.Errorf("read %d of %d bytes over %v; want the whole response (the server closed the connection as idle while it was being delivered)", n, size, time.Since(back))
			}
		})
	}
}
