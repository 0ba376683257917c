package cli

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/certs"
	"github.com/mpqsched/mpqsched/pkg/metrics"
	"github.com/mpqsched/mpqsched/pkg/mpfile"
	"github.com/mpqsched/mpqsched/pkg/pathmgr"
	"github.com/mpqsched/mpqsched/pkg/session"
)

func TestAutoFlags(t *testing.T) {
	ok := []string{"-addr", "127.0.0.1:1", "-ca", "x", "-paths", "auto"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(ok, "-backup", "wwan[", "get", "f"), `-backup: "wwan[" is not an interface name or pattern`},
		{append(ok, "-h3-addr", "127.0.0.1:2", "compare", "/f"), "compare needs fixed -paths"},
	} {
		code, _, stderr := runClient(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if names, err := parseBackupNames(" wwan0, eth2,,wwan*,cellular"); err != nil || fmt.Sprint(names) != "[wwan0 eth2 wwan* cellular]" {
		t.Errorf("parseBackupNames = %q, %v", names, err)
	}
}

// The brief: "log each event (one line each) and show them in the per-path
// stats the client prints at the end".
func TestAutoRecord(t *testing.T) {
	start := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	var log bytes.Buffer
	a := &autoPaths{start: start, stderr: &log}
	c1 := pathmgr.Endpoint{Index: 2, Name: "c1", IP: netip.MustParseAddr("10.10.1.2")}
	c2 := pathmgr.Endpoint{Index: 3, Name: "c2", IP: netip.MustParseAddr("10.10.2.2")}
	wl := pathmgr.Endpoint{Index: 9, Name: "wwan0", IP: netip.MustParseAddr("10.10.3.7")}
	a.onEvent(pathmgr.Event{Time: start, Kind: pathmgr.Joined, Endpoint: c1, Path: 0, Reason: "first path"})
	a.onEvent(pathmgr.Event{Time: start.Add(50 * time.Millisecond), Kind: pathmgr.Joined, Endpoint: c2, Path: 1})
	a.took(session.Stats{Paths: []session.PathStats{{ID: 0, BytesReceived: 5}, {ID: 1, BytesReceived: 3000}}}, 1)
	a.onEvent(pathmgr.Event{Time: start.Add(2 * time.Second), Kind: pathmgr.Removed, Endpoint: c2, Path: 1, Reason: "link deleted"})
	a.onEvent(pathmgr.Event{Time: start.Add(3 * time.Second), Kind: pathmgr.JoinFailed, Endpoint: wl, Backup: true, Err: fmt.Errorf("timeout")})
	a.onEvent(pathmgr.Event{Time: start.Add(4 * time.Second), Kind: pathmgr.Joined, Endpoint: wl, Path: 2, Backup: true})
	wantLog := "mpquic-client: path event at 0.000 s: joined path 0 on c1 10.10.1.2: first path\n" +
		"mpquic-client: path event at 0.050 s: joined path 1 on c2 10.10.2.2\n" +
		"mpquic-client: path event at 2.000 s: removed path 1 on c2 10.10.2.2: link deleted\n" +
		"mpquic-client: path event at 3.000 s: join on wwan0 10.10.3.7 failed (backup) (timeout)\n" +
		"mpquic-client: path event at 4.000 s: joined path 2 on wwan0 10.10.3.7 (backup)\n"
	if log.String() != wantLog {
		t.Errorf("event lines\n%s\nwant\n%s", log.String(), wantLog)
	}
	var r metrics.Result
	a.finish(session.Stats{Paths: []session.PathStats{{ID: 0, BytesReceived: 7000}, {ID: 2, BytesReceived: 4000}}}, &r)
	if fmt.Sprint(r.PathNames) != "[c1 c2 wwan0]" {
		t.Errorf("PathNames %q, want [c1 c2 wwan0] (by path ID)", r.PathNames)
	}
	for k, want := range map[string]float64{"path_joins": 3, "path_removals": 1, "path_join_failures": 1, "path_flaps_kept": 0} {
		if r.Extra[k] != want {
			t.Errorf("Extra[%s] = %v, want %v", k, r.Extra[k], want)
		}
	}
	var tab bytes.Buffer
	a.writeTable(&tab)
	wantTab := "paths (-paths auto; times since the start):\n" +
		"  path 0 c1 10.10.1.2: joined at 0.000 s, to the end, received 7000 B\n" +
		"  path 1 c2 10.10.2.2: joined at 0.050 s, removed at 2.000 s (link deleted), received 3000 B\n" +
		"  path 2 wwan0 10.10.3.7 backup: joined at 4.000 s, to the end, received 4000 B\n"
	if tab.String() != wantTab {
		t.Errorf("table\n%s\nwant\n%s", tab.String(), wantTab)
	}
}

// hostAddr returns an up, non-loopback interface of this host with a
// global IPv4 address, or skips.
func hostAddr(t *testing.T) (string, net.IP) {
	ifs, _ := net.Interfaces()
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagRunning == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && n.IP.IsGlobalUnicast() {
				return ifc.Name, n.IP.To4()
			}
		}
	}
	t.Skip("no up, non-loopback interface with a global IPv4 address here")
	return "", nil
}

// -paths auto end to end on this host: the server listens on the host's
// own address, the client's path manager finds that address over netlink
// and dials its first path from it; the event and the table name it.
func TestAutoDownload(t *testing.T) {
	ifname, ip := hostAddr(t)
	dir := t.TempDir()
	data := bytes.Repeat([]byte("auto paths "), 50<<10)
	if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	pair, err := certs.SelfSigned("localhost")
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(ca, pair.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := session.Listen(pc, pair.Server, nil)
	if err != nil {
		t.Fatal(err)
	}
	hs := newH3Server(fileHandler(&mpfile.Files{Dir: dir}, nil), serverLimits{}, nil)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(&h3sessionListener{ln: ln}) }()
	defer func() { hs.Close(); <-done; pc.Close() }()

	out := filepath.Join(t.TempDir(), "out")
	code, rs, stderr := runClient(t, "-addr", pc.LocalAddr().String(), "-ca", ca, "-paths", "auto", "-connect-timeout", "5s", "-timeout", "1m", "get", "f", "-o", out)
	if code != 0 || len(rs) != 1 || !rs[0].SHA256OK {
		t.Fatalf("exit %d, results %+v, stderr %s", code, rs, stderr)
	}
	if got, _ := os.ReadFile(out); !bytes.Equal(got, data) {
		t.Errorf("output file differs")
	}
	first := fmt.Sprintf("joined path 0 on %s %v: first path", ifname, ip)
	row := fmt.Sprintf("  path 0 %s %v: joined at ", ifname, ip)
	if !strings.Contains(stderr, first) || !strings.Contains(stderr, row) {
		t.Errorf("stderr lacks %q or %q:\n%s", first, row, stderr)
	}
	if r := rs[0]; len(r.PathNames) == 0 || r.PathNames[0] != ifname || r.Extra["path_joins"] < 1 {
		t.Errorf("result: path names %q, extra %v; want %s first and at least one join", r.PathNames, r.Extra, ifname)
	}
}
