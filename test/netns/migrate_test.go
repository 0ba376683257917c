package netns

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/netem"
)

// Issue 31: "a download that survives losing its interface by migration,
// in namespaces". mpquic-client falls back to plain HTTP/3 against a plain
// server (quic-go's http3 on mpquic-server's -h3-addr) on path 1; 2 s in,
// path 1's interface goes down (mpq-netns set-path 1 down, a radio
// vanishing) and the connection must move to path 2 by RFC 9000
// connection migration and finish, verified.
const (
	migrateDownAt  = 2 * time.Second
	migrateWithin  = 3 * time.Second // path 2 carries data within this of path 1's loss
	plainPort      = "4444"
	migratedLogged = "migrated to the path from " // the client's -v line
)

func TestFallbackMigratesWhenItsInterfaceGoes(t *testing.T) {
	requireNetns(t)
	bin, data, certDir := prepare(t)
	s := twoPath("migrate", 0)
	s.Prefix = nsPrefix("mpqmg") // apart from the other tests' topologies
	e := up(t, s, bin, data, certDir)
	smp := startRxSampler(t, e.spec.ClientNS(), []string{netem.ClientDev(1), netem.ClientDev(2)})
	stop, _, err := startIn(t, e.spec.ServerNS(), filepath.Join(bin, "mpquic-server"), []string{"-dir", data,
		"-addr", netem.ServerAddr + ":" + mpquicPort, "-h3-addr", netem.ServerAddr + ":" + plainPort,
		"-cert", filepath.Join(certDir, "cert.pem"), "-key", filepath.Join(certDir, "key.pem"), "-name", certName})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	time.Sleep(300 * time.Millisecond)
	var down time.Time
	start := time.Now()
	res, stderr, err := clientIn(t, e.spec.ClientNS(), filepath.Join(bin, "mpquic-client"), []string{"-ca", filepath.Join(certDir, "cert.pem"),
		"-server-name", certName, "-paths", netem.ClientAddr(1) + "," + netem.ClientAddr(2), "-timeout", "2m", "-q", "-v",
		"get", "https://" + netem.ServerAddr + ":" + plainPort + "/payload", "-o", "/dev/null"}, func() {
		time.Sleep(time.Until(start.Add(migrateDownAt)))
		down = time.Now()
		if err := netem.SetPath(e.spec, e.opts, 1, false); err != nil {
			t.Errorf("set-path 1 down: %v", err)
		}
	})
	end := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	tr, err := smp.Stop()
	if err != nil {
		t.Fatalf("sampling the client's interfaces: %v", err)
	}
	if res.Mode != metrics.ModeSinglePath || !res.SHA256OK || res.Bytes != fileSize {
		t.Errorf("result mode %q, sha256_ok %v, %d bytes: want single-path, verified, %d", res.Mode, res.SHA256OK, res.Bytes, fileSize)
	}
	if end.Sub(down) < migrateWithin {
		t.Fatalf("the download ended %v after path 1 went down: too soon to judge", end.Sub(down))
	}
	moved, ok := tr.firstBytes(1, down, end, dataBackBytes)
	t.Logf("MIGRATE path 1 down at %.1f s: %d B in %.2f s (%s); path 2 carried data %s after path 1 went down",
		down.Sub(start).Seconds(), res.Bytes, res.FCTSeconds, res.Mode, dur(moved, ok))
	if !strings.Contains(stderr, migratedLogged+netem.ClientAddr(2)) {
		t.Errorf("the client's -v log does not say it migrated to path 2")
	}
	if !ok || moved > migrateWithin {
		t.Errorf("path 2 carried no data within %v of path 1's loss (%s)", migrateWithin, dur(moved, ok))
	}
}
