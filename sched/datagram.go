package sched

// DatagramScheduler is implemented by schedulers that choose the paths of
// application datagrams (RFC 9221: unreliable, never retransmitted). The
// transport asks once per datagram; a datagram goes on every marked path,
// so marking several sends copies, which the receiver discards by sequence
// number. An empty set drops the datagram (the transport counts it).
//
// DecideDatagram is serialized with Decide (one goroutine at a time) and, as
// Decide, must not allocate. conn and paths are the same snapshots Decide
// sees (conn.Now is the time of the decision); size is the datagram's
// payload, bytes. Marks at or above len(paths) are ignored.
//
// A scheduler that does not implement it gets FastestLive.
type DatagramScheduler interface {
	DecideDatagram(conn *ConnInfo, paths []PathInfo, size int) PathSet
}

// DecideDatagram is s's choice of paths for a datagram of size bytes: its
// DecideDatagram if it implements DatagramScheduler, else FastestLive.
func DecideDatagram(s Scheduler, conn *ConnInfo, paths []PathInfo, size int) PathSet {
	if ds, ok := s.(DatagramScheduler); ok {
		return ds.DecideDatagram(conn, paths, size)
	}
	return FastestLive(paths)
}

// FastestLive marks the live path with the lowest smoothed RTT, the default
// path of a datagram. Live means not potentially failed; backup paths count
// only when no regular path is live (OnlyBackups). A path with an RTT sample
// beats one without; ties go to the lowest index. If no path is live, it
// marks the fastest of all, since a potentially failed path may still
// deliver. It returns the empty set only for no paths.
func FastestLive(paths []PathInfo) PathSet {
	backup := OnlyBackups(paths)
	best := -1
	for i := range paths {
		p := &paths[i]
		if p.PotentiallyFailed || p.Backup != backup {
			continue
		}
		if best < 0 || fasterRTT(p, &paths[best]) {
			best = i
		}
	}
	if best < 0 { // no live path
		for i := range paths {
			if best < 0 || fasterRTT(&paths[i], &paths[best]) {
				best = i
			}
		}
	}
	if best < 0 {
		return 0
	}
	return Of(best)
}

// fasterRTT reports whether a has a lower smoothed RTT than b, a path
// without a sample (0) being the slowest.
func fasterRTT(a, b *PathInfo) bool {
	switch {
	case a.SmoothedRTT == 0:
		return false
	case b.SmoothedRTT == 0:
		return true
	}
	return a.SmoothedRTT < b.SmoothedRTT
}
