package pathmgr

import (
	"context"
	"errors"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// watch runs the Source until the manager stops, calling Watch again
// after a pause when it fails.
func (m *Manager) watch() {
	defer close(m.srcEnd)
	for {
		err := m.cfg.Source.Watch(m.ctx, m.updates)
		if m.ctx.Err() != nil {
			return
		}
		m.cfg.Logf("pathmgr: interface watch failed (%v); starting again in %v", err, watchRetry)
		select {
		case <-time.After(watchRetry):
		case <-m.ctx.Done():
			return
		}
	}
}

// loop is the manager's one goroutine of bookkeeping: it applies updates
// and join results to the table, runs the table's actions, and wakes up
// when a debounce or retry is due.
func (m *Manager) loop() {
	defer close(m.loopEnd)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	syncedOnce := false
	for {
		var acts []action
		select {
		case u := <-m.updates:
			m.mu.Lock()
			m.t.apply(u)
			if u.Kind == Synced && !syncedOnce {
				syncedOnce = true
				close(m.synced)
			}
			acts = m.t.reconcile(time.Now())
			m.mu.Unlock()
		case r := <-m.results:
			m.joinEnded(r.k)
			m.mu.Lock()
			acts = m.t.joinDone(r.k, r.gen, r.id, r.err, time.Now())
			m.mu.Unlock()
		case a := <-m.attachC:
			m.j = a.j
			m.mu.Lock()
			acts = append([]action{m.t.attach(a.first, a.id)}, m.t.reconcile(time.Now())...)
			m.mu.Unlock()
		case <-timer.C:
			m.mu.Lock()
			acts = m.t.reconcile(time.Now())
			m.mu.Unlock()
		case <-m.ctx.Done():
			m.drainJoins()
			return
		}
		for _, a := range acts {
			m.run(a)
		}
		m.mu.Lock()
		at, ok := m.t.next()
		m.mu.Unlock()
		timer.Stop()
		if ok {
			timer.Reset(max(time.Until(at), 0))
		}
	}
}

// run carries out one action of the table.
func (m *Manager) run(a action) {
	now := time.Now()
	switch a.kind {
	case actJoin:
		ctx, cancel := context.WithTimeout(m.ctx, m.cfg.JoinTimeout)
		m.cancels[a.ep.key()] = cancel
		m.inflight++
		go m.join(ctx, a)
	case actCancel:
		if c := m.cancels[a.ep.key()]; c != nil {
			c()
		}
	case actRemove:
		err := m.j.RemovePath(a.id)
		m.emit(Event{Time: now, Kind: Removed, Endpoint: a.ep, Path: a.id, Backup: a.backup, Reason: a.reason, Err: err})
	case actJoined:
		m.emit(Event{Time: now, Kind: Joined, Endpoint: a.ep, Path: a.id, Backup: a.backup, Reason: a.reason})
	case actJoinFailed:
		m.emit(Event{Time: now, Kind: JoinFailed, Endpoint: a.ep, Backup: a.backup, Err: a.err})
	case actKept:
		m.emit(Event{Time: now, Kind: Kept, Endpoint: a.ep, Path: a.id, Backup: a.backup, Reason: a.reason})
	}
}

func (m *Manager) emit(e Event) {
	m.cfg.Logf("pathmgr: %v", e)
	if m.cfg.OnEvent != nil {
		m.cfg.OnEvent(e)
	}
}

// joinEnded forgets the join over k.
func (m *Manager) joinEnded(k key) {
	if c := m.cancels[k]; c != nil {
		c()
	}
	delete(m.cancels, k)
	m.inflight--
}

// join opens a socket on a.ep and joins it to the session; the result goes
// back to the loop (or nowhere, if the loop has ended).
func (m *Manager) join(ctx context.Context, a action) {
	r := joinResult{k: a.ep.key(), gen: a.gen}
	pc, err := m.cfg.Listen(a.ep, m.cfg.Remote)
	if err == nil {
		r.id, err = m.j.AddPath(ctx, pc, m.cfg.Remote, session.PathOptions{Backup: a.backup})
		if err != nil {
			pc.Close() // AddPath owns it, but not every failure closes it
		}
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = errors.Join(err, context.Cause(ctx))
	}
	r.err = err
	select {
	case m.results <- r:
	case <-m.loopEnd:
	}
}

// drainJoins cancels the joins in flight and waits, up to closeWait, for
// their results, so that no join outlives the manager.
func (m *Manager) drainJoins() {
	for _, c := range m.cancels {
		c()
	}
	t := time.NewTimer(closeWait)
	defer t.Stop()
	for m.inflight > 0 {
		select {
		case r := <-m.results:
			m.joinEnded(r.k)
			if r.err == nil {
				m.emit(Event{Time: time.Now(), Kind: Joined, Endpoint: Endpoint{Index: r.k.index, IP: r.k.ip}, Path: r.id, Reason: "while closing"})
			}
		case <-t.C:
			m.cfg.Logf("pathmgr: %d joins did not stop within %v", m.inflight, closeWait)
			return
		}
	}
}
