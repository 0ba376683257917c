package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// Hostile clients of the load test that a genuine session client plays
// (the raw ones are in package attack).

// dialOne connects a one-path session from a new loopback socket; close
// it with the returned function.
func dialOne(ctx context.Context, ua *net.UDPAddr, tlsConf *tls.Config) (*session.Session, func(), error) {
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		return nil, nil, err
	}
	s, err := connect(ctx, []net.PacketConn{pc}, ua, tlsConf, nil, 30*time.Second)
	if err != nil {
		pc.Close()
		return nil, nil, err
	}
	return s, func() { s.CloseWithError(0, ""); pc.Close() }, nil
}

// onSessions dials n one-path sessions at once, runs f on each in its own
// goroutine, closes it when f returns, and returns how many connected.
func onSessions(ua *net.UDPAddr, tlsConf *tls.Config, n int, f func(*session.Session)) int64 {
	var sessions atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, closeAll, err := dialOne(context.Background(), ua, tlsConf)
			if err != nil {
				return
			}
			defer closeAll()
			sessions.Add(1)
			f(s)
		}()
	}
	wg.Wait()
	return sessions.Load()
}

// neverReadingMargin is how long after the server's write timeout a
// never-reading downloader waits, once the legitimate load is over, before
// it reads: time for the server to fill the stream's window first.
const neverReadingMargin = 10 * time.Second

// neverReading (load test (f)) requests the large file over HTTP/3 on n
// sessions and never reads the body until ctx ends; then it reads what is
// left and counts in Ended the downloads the server reset (its write
// timeout fails the handler's writes and the stream is reset), and in
// Answers each download's end by the server's reset code ("reset 0x102").
func neverReading(ctx context.Context, ua *net.UDPAddr, tlsConf *tls.Config, n int) attack.Result {
	var ended atomic.Int64
	var mu sync.Mutex
	answers := map[string]int64{}
	sessions := onSessions(ua, tlsConf, n, func(s *session.Session) {
		tr := &h3.Transport{Dial: func(context.Context, string) (h3.Conn, error) { return h3.FromSession(s), nil }}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, "https://"+ua.String()+"/big", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		// Read nothing until the legitimate load is over and the
		// server's write timeout has certainly run out: a fast load
		// must not end the attack before the reset is due. Counting
		// from the request was not enough: under the load the server
		// may still be filling this stream's window many seconds
		// later (1 of 4 downloads was read before its reset in a CI
		// run). Once the load is over the server fills the window at
		// once, so the reset is due at most the write timeout after
		// that.
		<-ctx.Done()
		time.Sleep(defaultWriteTimeout + neverReadingMargin)
		_, err = io.Copy(io.Discard, resp.Body)
		var he *h3.Error
		a := "read to the end"
		switch {
		case errors.As(err, &he) && he.Stream && he.Remote:
			ended.Add(1)
			a = fmt.Sprintf("reset %#x", uint64(he.Code))
		case err != nil:
			a = "error"
		}
		mu.Lock()
		answers[a]++
		mu.Unlock()
	})
	return attack.Result{Attack: "never-reading", Sessions: sessions, Ended: ended.Load(), Answers: answers}
}

// halfSent (load test (g)) opens perSession streams on each of n sessions
// and sends half an HTTP/3 request on each (a HEADERS frame's type alone,
// or its header announcing 100 bytes and 10 of them); Frames counts the
// requests, Ended those the server cut (the stream reset or ended) within
// 20 s.
func halfSent(ctx context.Context, ua *net.UDPAddr, tlsConf *tls.Config, n, perSession int) attack.Result {
	var frames, ended atomic.Int64
	sessions := onSessions(ua, tlsConf, n, func(s *session.Session) {
		var swg sync.WaitGroup
		for i := range perSession {
			st, err := s.OpenStreamSync(ctx)
			if err != nil {
				return
			}
			half := []byte{0x01} // HEADERS, no length
			if i%2 == 1 {
				half = append([]byte{0x01, 0x40, 100}, make([]byte, 10)...)
			}
			if _, err := st.Write(half); err != nil {
				return
			}
			frames.Add(1)
			swg.Add(1)
			go func() {
				defer swg.Done()
				st.SetReadDeadline(time.Now().Add(20 * time.Second))
				b, err := io.ReadAll(st)
				var se *session.StreamError
				if err == nil && len(b) == 0 || errors.As(err, &se) && se.Remote {
					ended.Add(1)
				}
				st.Close()
			}()
		}
		swg.Wait()
	})
	return attack.Result{Attack: "half-sent", Sessions: sessions, Frames: frames.Load(), Ended: ended.Load()}
}
