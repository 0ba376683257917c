package session

// Connection migration for DialAny's plain fallback: a plain QUIC
// connection has one path at a time, but a client with several interfaces
// can move it when the current one fails. RFC 9000 §9: "the use of a new
// local address ... can be initiated by the endpoint"; §9.1: "An endpoint
// can probe for peer reachability from a new local address using path
// validation prior to migrating the connection to the new local address."
// quic-go does both: Conn.AddPath, Path.Probe, Path.Switch.

import (
	"context"
	"net"
	"net/netip"
	"time"

	"github.com/quic-go/quic-go"
)

// Migration timing.
const (
	migrateCheck   = 100 * time.Millisecond // how often the current path is looked at
	migrateSilence = time.Second            // nothing received this long (at least 4 smoothed RTTs) after a send: the path failed
	migrateProbe   = 2 * time.Second        // bound on one spare's path validation
)

// Migrate keeps conn, a client's plain QUIC connection (DialAny's
// fallback), moving to the first of spares that passes path validation
// whenever its current path fails: the current path's local address is
// assigned to no interface that is up (a vanished radio, a deleted
// address), or nothing was received for a second (and four smoothed RTTs)
// although packets were sent (a request, an acknowledgement, quic-go's
// keep-alive: a download whose downlink died unnoticed waits for the next
// keep-alive, Config.QUIC.KeepAlivePeriod). It owns spares, each a socket on another
// local address; they close when conn ends. logf, if not nil, gets one
// line per event. It returns at once; the watch ends with conn.
func Migrate(conn *quic.Conn, spares []net.PacketConn, logf func(string, ...any)) {
	if logf == nil {
		logf = func(string, ...any) {}
	}
	m := &migration{conn: conn, logf: logf, current: conn.LocalAddr()}
	for _, pc := range spares {
		m.spares = append(m.spares, &quic.Transport{Conn: tolerateUnreachable(pc)})
	}
	go m.run()
}

// migration is the state of one Migrate.
type migration struct {
	conn    *quic.Conn
	logf    func(string, ...any)
	spares  []*quic.Transport // not yet used, in order
	current net.Addr          // local address of the current path
}

func (m *migration) run() {
	defer func() {
		for _, tr := range m.spares {
			closeTransport(tr)
		}
	}()
	ctx := m.conn.Context()
	tk := time.NewTicker(migrateCheck)
	defer tk.Stop()
	var sent, recv uint64
	lastRecv, lastSent := time.Now(), time.Time{}
	for len(m.spares) > 0 {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		now := time.Now()
		st := m.conn.ConnectionStats()
		if st.PacketsReceived != recv {
			recv, lastRecv = st.PacketsReceived, now
		}
		if st.PacketsSent != sent {
			sent, lastSent = st.PacketsSent, now
		}
		why := ""
		switch silence := max(migrateSilence, 4*st.SmoothedRTT); {
		case !localAddrUp(m.current):
			why = "its local address " + m.current.String() + " is gone or its interface is down"
		case lastSent.After(lastRecv) && now.Sub(lastRecv) > silence:
			why = "nothing received for " + now.Sub(lastRecv).Round(time.Millisecond).String()
		default:
			continue
		}
		m.logf("session: plain connection: path from %v failed (%s); migrating", m.current, why)
		m.move(ctx)
		lastRecv = time.Now() // the new path's own silence counts from now
	}
}

// move switches to the first spare that validates, dropping those that do
// not.
func (m *migration) move(ctx context.Context) {
	for len(m.spares) > 0 {
		tr := m.spares[0]
		m.spares = m.spares[1:]
		local := tr.Conn.LocalAddr()
		if !localAddrUp(local) {
			m.logf("session: plain connection: spare path from %v unusable: address gone or interface down", local)
			closeTransport(tr)
			continue
		}
		p, err := m.conn.AddPath(tr)
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, migrateProbe)
			err = p.Probe(pctx)
			cancel()
			if err == nil {
				err = p.Switch()
			}
			if err != nil {
				p.Close()
			}
		}
		if err != nil {
			m.logf("session: plain connection: path from %v: not usable: %v", local, err)
			closeTransport(tr)
			continue
		}
		m.logf("session: plain connection: migrated to the path from %v", local)
		m.current = local
		// tr carries the connection now: its socket closes when the
		// connection ends.
		context.AfterFunc(m.conn.Context(), func() { closeTransport(tr) })
		return
	}
	m.logf("session: plain connection: no spare path left")
}

// localAddrUp reports whether a's IP address is assigned to an interface
// that is up, or cannot tell (an unspecified address: any interface).
func localAddrUp(a net.Addr) bool {
	u, ok := a.(*net.UDPAddr)
	if !ok {
		return true
	}
	ip, ok := netip.AddrFromSlice(u.IP)
	if !ok || ip.Unmap().IsUnspecified() {
		return true
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return true
	}
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok {
				if got, ok := netip.AddrFromSlice(n.IP); ok && got.Unmap() == ip.Unmap() {
					return true
				}
			}
		}
	}
	return false
}
