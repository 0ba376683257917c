package h3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log"
	"net/http"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/emu"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// An http.Client downloading a file over HTTP/3 on a two-path multipath
// session, here over the in-process emulator (a Wi-Fi-like and an LTE-like
// path). With real networks, the Dial hook would call session.DialAddr (or
// session.Dial on a socket bound to each interface) and AddPath for every
// local address.
func Example() {
	wifi := emu.LinkConfig{RateBps: 20e6, Delay: 5 * time.Millisecond}
	lte := emu.LinkConfig{RateBps: 10e6, Delay: 20 * time.Millisecond}
	topo, err := emu.NewTopology(1, emu.PathSpec{Up: wifi, Down: wifi}, emu.PathSpec{Up: lte, Down: lte})
	if err != nil {
		log.Fatal(err)
	}
	defer topo.Close()
	pair, err := certs.SelfSigned("files.test")
	if err != nil {
		log.Fatal(err)
	}

	// Server: any http.Handler, here a file served with http.ServeContent.
	file := make([]byte, 1<<20)
	ln, err := session.Listen(topo.Server, pair.Server, nil)
	if err != nil {
		log.Fatal(err)
	}
	srv := &h3.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "file.bin", time.Time{}, bytes.NewReader(file))
	})}
	go srv.Serve(h3.SessionListener(ln))
	defer srv.Close()

	// Client: one session per authority, dialled on the first path and
	// joined on the second.
	tr := &h3.Transport{Dial: func(ctx context.Context, authority string) (h3.Conn, error) {
		s, err := session.Dial(ctx, topo.Clients[0], topo.Server.LocalAddr(), pair.Client, nil)
		if err != nil {
			return nil, err
		}
		if _, err := s.AddPath(ctx, topo.Clients[1], topo.Server.LocalAddr(), session.PathOptions{}); err != nil {
			s.Close()
			return nil, err
		}
		return h3.FromSession(s), nil
	}}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	resp, err := client.Get("https://files.test/file.bin")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	h := sha256.New()
	n, err := io.Copy(h, resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s %s: %d bytes, intact: %v\n", resp.Proto, resp.Status, n, [32]byte(h.Sum(nil)) == sha256.Sum256(file))
	// Output: HTTP/3.0 200 OK: 1048576 bytes, intact: true
}
