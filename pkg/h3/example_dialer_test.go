package h3_test

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strconv"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/h3"
	"github.com/mpqsched/mpqsched/pkg/session"
)

// An http.Client whose URL names a host, over real UDP sockets: the
// Dialer checks the certificate against the URL's host, offers multipath
// and plain HTTP/3 in one handshake, and reports each path; the response's
// TLS state says which protocol ran. The server serves sessions and plain
// HTTP/3 clients on one port.
func ExampleDialer() {
	pair, err := certs.SelfSigned("localhost") // a certificate for the name, not the IP address
	if err != nil {
		log.Fatal(err)
	}
	ln, err := session.ListenAddr("127.0.0.1:0", pair.Server, &session.Config{PlainALPNs: []string{h3.NextProtoH3}})
	if err != nil {
		log.Fatal(err)
	}
	srv := &h3.Server{Handler: h3.AdvertiseMultipath(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	}))}
	go srv.Serve(h3.SessionListener(ln))
	defer srv.Close()

	roots := pair.Client.Clone()
	roots.ServerName = "" // the default: the URL's host
	d := &h3.Dialer{
		TLSConfig:  roots,
		LocalAddrs: []string{"127.0.0.1", "127.0.0.2"}, // one path each
		OnPath: func(e h3.PathEvent) {
			fmt.Printf("path %d: mode %s, in use %v\n", e.Index, e.Mode, e.Err == nil)
		},
	}
	tr := &h3.Transport{Dial: d.Dial}
	defer tr.Close()
	client := &http.Client{Transport: tr}
	port := strconv.Itoa(ln.Addr().(*net.UDPAddr).Port)
	resp, err := client.Get("https://localhost:" + port + "/")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Printf("%s over %s: %s\n", resp.Status, resp.TLS.NegotiatedProtocol, b)
	// Output:
	// path 1: mode mpqsched/1, in use true
	// path 2: mode mpqsched/1, in use true
	// 200 OK over mpqsched/1: hello
}
