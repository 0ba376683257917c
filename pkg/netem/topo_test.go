package netem

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// requireRoot skips unless MPQ_NETNS=1 and this process is root with ip,
// tc and ethtool: the test builds namespaces on this machine.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Getenv("MPQ_NETNS") != "1" || os.Geteuid() != 0 {
		t.Skip("set MPQ_NETNS=1 and run as root to build namespaces")
	}
	for _, tool := range []string{"ip", "tc", "ethtool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is missing")
		}
	}
}

// ipOut runs `ip -n ns args…` and returns its output.
func ipOut(t *testing.T, ns string, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", append([]string{"-n", ns}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip -n %s %v: %v: %s", ns, args, err, out)
	}
	return string(out)
}

// Up builds, over netlink, the links, addresses, source rules and routes
// the README's table lists; SetPath takes a path's client link down and
// back with its routes; Down removes every namespace.
func TestUpSetPathDown(t *testing.T) {
	requireRoot(t)
	s := Spec{Prefix: "mpqnl", Backend: BackendNFQ, Paths: []Path{
		{Link: &Link{RateMbit: 50}}, {Link: &Link{RateMbit: 20}},
	}}
	o := Options{StateDir: t.TempDir(), DelaydPath: "/nonexistent/mpq-delayd"} // no delay: never started
	_ = Down(s, o)
	s, err := Up(s, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := Down(s, o); err != nil {
			t.Error(err)
		}
		for _, n := range s.Namespaces() {
			if nsExists(n) {
				t.Errorf("namespace %s left after Down", n)
			}
		}
	})
	cl := s.ClientNS()
	for _, want := range []struct{ ns, args, has string }{
		{cl, "addr show dev c2", "10.10.2.2/24"},
		{cl, "link show dev c1", "UP"},
		{cl, "rule show", "from 10.10.2.2 lookup 102"},
		{cl, "route show table 102", "default via 10.10.2.1 dev c2"},
		{cl, "route show", "10.20.0.0/16 via 10.10.1.1 dev c1"},
		{s.RouterNS(2), "addr show dev r2s", "10.20.2.1/24"},
		{s.RouterNS(2), "route show", "10.20.0.1 via 10.20.2.2"},
		{s.ServerNS(), "addr show dev lo", "10.20.0.1/32"},
		{s.ServerNS(), "route show", "10.10.2.0/24 via 10.20.2.1"},
	} {
		if got := ipOut(t, want.ns, strings.Fields(want.args)...); !strings.Contains(got, want.has) {
			t.Errorf("ip -n %s %s: want %q in\n%s", want.ns, want.args, want.has, got)
		}
	}
	if err := SetPath(s, o, 2, false); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, cl, "link", "show", "dev", "c2"); !strings.Contains(got, "state DOWN") {
		t.Errorf("after SetPath down, c2 is\n%s", got)
	}
	if got := ipOut(t, cl, "route", "show", "table", "102"); strings.Contains(got, "default") {
		t.Errorf("after SetPath down, table 102 still routes:\n%s", got)
	}
	if err := SetPath(s, o, 2, true); err != nil {
		t.Fatal(err)
	}
	if got := ipOut(t, cl, "route", "show", "table", "102"); !strings.Contains(got, "default via 10.10.2.1 dev c2") {
		t.Errorf("after SetPath up, table 102 is\n%s", got)
	}
}
