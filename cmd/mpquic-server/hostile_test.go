package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/cmd/mpq-attack/attack"
	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/h3"
)

var servingRE = regexp.MustCompile(` on (127\.0\.0\.1:\d+) \(multipath`)

// Issue 29: "a hostile client can crash the server process". mpquic-server
// runs as a process of its own (this test binary re-executed as main) while
// every follow-up of a complete GET of attack.FollowUps, violations,
// datagrams, resets and closes, runs against it, three rounds each on two
// sessions at once. The process must still be running afterwards and
// serve a GET with the file's bytes. At a8db118 it exited with status 2
// ("panic: runtime error: invalid memory address", pkg/h3/server.go:325)
// on the first "extra-byte" round.
func TestSurvivesHostileRequests(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: starts the server process")
	}
	dir := t.TempDir()
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := os.WriteFile(filepath.Join(dir, "big"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := server("-addr", "127.0.0.1:0", "-dir", dir, "-dev-cert", dir, "-v")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	}()
	addrc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := servingRE.FindStringSubmatch(sc.Text()); m != nil {
				addrc <- m[1]
			}
			t.Log("server: ", sc.Text())
		}
		exited <- cmd.Wait()
	}()
	var addr string
	select {
	case addr = <-addrc:
	case err := <-exited:
		t.Fatalf("server exited before serving: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("server did not start within 30 s")
	}
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	pair, err := certs.ClientPinned(filepath.Join(dir, "cert.pem"), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	o := attack.Options{Addr: ua, TLS: pair, Sessions: 2, Duration: 25 * time.Second, File: "big"}
	for _, after := range attack.FollowUps {
		for round := 0; round < 3; round++ {
			r := attack.H3AfterRequest(context.Background(), o, after)
			select {
			case err := <-exited:
				t.Fatalf("the server exited after %s (round %d): %v (answers %v)", after, round, err, r.Answers)
			default:
			}
			if r.Sessions != int64(o.Sessions) {
				t.Errorf("%s: %d sessions, want %d (%+v)", after, r.Sessions, o.Sessions, r)
			}
		}
	}
	tr := &h3.Transport{Dial: h3.SessionDialer(pair, nil)}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, err := c.Get("https://" + addr + "/big")
	if err != nil {
		t.Fatalf("GET after the attacks: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(got) != string(want) {
		t.Errorf("GET after the attacks: status %d, %d bytes (match %v), %v", resp.StatusCode, len(got), string(got) == string(want), err)
	}
	select {
	case err := <-exited:
		t.Fatalf("the server exited: %v", err)
	default:
	}
}
