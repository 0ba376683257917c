package netem

import "fmt"

// Names of the namespaces, devices and addresses of a topology. Path p counts
// from 1.

// Roles accepted by NS.
const (
	RoleClient = "client"
	RoleServer = "server"
)

// ServerAddr is the server's service address, on its lo interface.
const ServerAddr = "10.20.0.1"

// ClientNS is the client namespace's name.
func (s Spec) ClientNS() string { return s.WithDefaults().Prefix + "-client" }

// ServerNS is the server namespace's name.
func (s Spec) ServerNS() string { return s.WithDefaults().Prefix + "-server" }

// RouterNS is path p's router namespace's name.
func (s Spec) RouterNS(p int) string { return fmt.Sprintf("%s-r%d", s.WithDefaults().Prefix, p) }

// NS maps a role ("client", "server", "r1", "r2", …) to a namespace name.
func (s Spec) NS(role string) (string, error) {
	switch role {
	case RoleClient:
		return s.ClientNS(), nil
	case RoleServer:
		return s.ServerNS(), nil
	}
	var p int
	if _, err := fmt.Sscanf(role, "r%d", &p); err == nil && p >= 1 && p <= len(s.Paths) && role == fmt.Sprintf("r%d", p) {
		return s.RouterNS(p), nil
	}
	return "", fmt.Errorf("netem: unknown namespace role %q (want client, server or r1..r%d)", role, len(s.Paths))
}

// Namespaces lists every namespace of the topology.
func (s Spec) Namespaces() []string {
	ns := []string{s.ClientNS(), s.ServerNS()}
	for p := 1; p <= len(s.Paths); p++ {
		ns = append(ns, s.RouterNS(p))
	}
	return ns
}

// ClientAddr is the client's address on path p.
func ClientAddr(p int) string { return fmt.Sprintf("10.10.%d.2", p) }

// ServerPathAddr is the server's link address on path p.
func ServerPathAddr(p int) string { return fmt.Sprintf("10.20.%d.2", p) }

func routerClientAddr(p int) string { return fmt.Sprintf("10.10.%d.1", p) }
func routerServerAddr(p int) string { return fmt.Sprintf("10.20.%d.1", p) }

// ClientDev is the client's interface on path p.
func ClientDev(p int) string { return fmt.Sprintf("c%d", p) }

// ServerDev is the server's interface on path p.
func ServerDev(p int) string { return fmt.Sprintf("s%d", p) }

func routerClientDev(p int) string { return fmt.Sprintf("r%dc", p) }
func routerServerDev(p int) string { return fmt.Sprintf("r%ds", p) }

// queueNum is the NFQUEUE number used for path p's direction (c2s true).
func queueNum(p int, c2s bool) int {
	if c2s {
		return 2*p - 1
	}
	return 2 * p
}
