package pathmgr

import (
	"slices"
	"time"

	"github.com/mpqsched/mpqsched/sched"
)

// state is where an endpoint is in its life as a path.
type state uint8

const (
	ready   state = iota + 1 // usable; its join is due at entry.due (after the debounce, once attached)
	joining                  // a join is in flight
	joined                   // a path of the session
	leaving                  // joined, but unusable since the debounce started; removal due at entry.due
	failed                   // the last join failed; retried at entry.due
)

// entry is one endpoint the table follows: usable, or carrying a path.
type entry struct {
	ep       Endpoint
	backup   bool
	st       state
	due      time.Time    // ready, leaving, failed: when the next step is due
	id       sched.PathID // joined, leaving: the path
	reason   string       // leaving: why the endpoint is unusable
	unwanted string       // joining: why the endpoint became unusable during the join ("" while wanted)
	gen      uint64       // joining: the join's number, to match its result
}

// actionKind is what the Manager has to do, or report.
type actionKind uint8

const (
	actJoin       actionKind = iota + 1 // start a join over ep (number gen)
	actCancel                           // cancel the join over ep
	actRemove                           // remove path id (reason); report Removed
	actJoined                           // report Joined
	actJoinFailed                       // report JoinFailed
	actKept                             // report Kept
)

// action is one step the table asks for.
type action struct {
	kind   actionKind
	ep     Endpoint
	backup bool
	id     sched.PathID
	reason string
	gen    uint64
	err    error
}

// table is the manager's bookkeeping, with no goroutines and no clock:
// every method takes the time. It knows the links and addresses that the
// Source reported, derives the usable endpoints under the policy, and
// moves each endpoint through ready → joining → joined → leaving, with the
// debounce in front of joins and removals.
type table struct {
	policy   Policy
	family   int           // the server's address family: 4, 6 or 0 (any)
	debounce time.Duration // an endpoint must stay usable (or unusable) this long before a join (or removal)
	retry    time.Duration // pause after a failed join before the next

	links    map[int]Link
	addrs    map[key]Addr
	synced   bool // a snapshot is complete: the view can be acted on
	attached bool // the Joiner is known: joins may start
	eps      map[key]*entry
	gen      uint64 // joins started
}

func newTable(p Policy, family int, debounce, retry time.Duration) *table {
	return &table{policy: p, family: family, debounce: debounce, retry: retry,
		links: map[int]Link{}, addrs: map[key]Addr{}, eps: map[key]*entry{}}
}

// apply takes in one update of the Source.
func (t *table) apply(u Update) {
	switch u.Kind {
	case Resync:
		clear(t.links)
		clear(t.addrs)
		t.synced = false
	case Synced:
		t.synced = true
	case LinkChanged:
		t.links[u.Link.Index] = u.Link
	case LinkDeleted:
		delete(t.links, u.Link.Index)
		for k := range t.addrs {
			if k.index == u.Link.Index {
				delete(t.addrs, k)
			}
		}
	case AddrAdded:
		u.Addr.IP = u.Addr.IP.Unmap()
		t.addrs[key{u.Addr.Index, u.Addr.IP}] = u.Addr
	case AddrDeleted:
		delete(t.addrs, key{u.Addr.Index, u.Addr.IP.Unmap()})
	}
}

// why says why the endpoint k is not usable now ("" if it is).
func (t *table) why(k key) string {
	a, ok := t.addrs[k]
	if !ok {
		if _, lok := t.links[k.index]; !lok {
			return whyNoLink
		}
		return "address removed"
	}
	l, lok := t.links[k.index]
	return t.policy.usable(l, lok, a, t.family)
}

// usable lists the endpoints usable now, preferred first: not a backup,
// then by interface index and address.
func (t *table) usable() []Endpoint {
	var out []Endpoint
	for k := range t.addrs {
		if t.why(k) == whyOK {
			out = append(out, Endpoint{Index: k.index, Name: t.links[k.index].Name, IP: k.ip})
		}
	}
	slices.SortFunc(out, func(a, b Endpoint) int {
		ba, bb := t.policy.IsBackup(t.links[a.Index]), t.policy.IsBackup(t.links[b.Index])
		switch {
		case ba != bb && !ba:
			return -1
		case ba != bb:
			return 1
		case a.key().less(b.key()):
			return -1
		case b.key().less(a.key()):
			return 1
		}
		return 0
	})
	return out
}

// attach records that ep already carries path id (the first path, dialled
// by the caller) and lets joins start.
func (t *table) attach(ep Endpoint, id sched.PathID) action {
	t.attached = true
	k := ep.key()
	e := &entry{ep: ep, backup: t.policy.IsBackup(t.links[ep.Index]), st: joined, id: id}
	t.eps[k] = e // no join is in flight before attach
	return action{kind: actJoined, ep: ep, backup: e.backup, id: id, reason: "first path"}
}

// sortedKeys returns the followed endpoints' keys in order, so that the
// actions come out in a repeatable order.
func (t *table) sortedKeys() []key {
	ks := make([]key, 0, len(t.eps))
	for k := range t.eps {
		ks = append(ks, k)
	}
	slices.SortFunc(ks, func(a, b key) int {
		if a.less(b) {
			return -1
		}
		if b.less(a) {
			return 1
		}
		return 0
	})
	return ks
}

// reconcile compares the usable endpoints with the paths at now and
// returns what to do. Nothing happens while a snapshot is incomplete.
func (t *table) reconcile(now time.Time) []action {
	if !t.synced {
		return nil
	}
	var acts []action
	for _, ep := range t.usable() {
		if _, ok := t.eps[ep.key()]; !ok {
			t.eps[ep.key()] = &entry{ep: ep, backup: t.policy.IsBackup(t.links[ep.Index]), st: ready, due: now.Add(t.debounce)}
		}
	}
	for _, k := range t.sortedKeys() {
		e := t.eps[k]
		why := t.why(k)
		if why == whyOK {
			e.ep.Name = t.links[k.index].Name
		}
		switch e.st {
		case ready, failed:
			switch {
			case why != whyOK:
				delete(t.eps, k)
			case t.attached && !now.Before(e.due):
				t.gen++
				e.st, e.gen = joining, t.gen
				e.backup = t.policy.IsBackup(t.links[k.index])
				acts = append(acts, action{kind: actJoin, ep: e.ep, backup: e.backup, gen: e.gen})
			}
		case joining:
			if why != whyOK && e.unwanted == "" {
				e.unwanted = why
				acts = append(acts, action{kind: actCancel, ep: e.ep, gen: e.gen})
			}
		case joined:
			if why != whyOK {
				e.st, e.reason, e.due = leaving, why, now.Add(t.debounce)
			}
		case leaving:
			if why == whyOK {
				e.st = joined
				acts = append(acts, action{kind: actKept, ep: e.ep, backup: e.backup, id: e.id, reason: e.reason + " and back within the debounce"})
				e.reason = ""
			} else {
				e.reason = why
			}
		}
		// A deleted link takes its sockets with it: nothing to wait for.
		if e.st == leaving && e.reason == whyNoLink && e.due.After(now) {
			e.due = now
		}
		if e.st == leaving && !now.Before(e.due) {
			delete(t.eps, k)
			acts = append(acts, action{kind: actRemove, ep: e.ep, backup: e.backup, id: e.id, reason: e.reason})
		}
	}
	return acts
}

// joinDone takes in the result of join gen over k at now: the path id, or
// err.
func (t *table) joinDone(k key, gen uint64, id sched.PathID, err error, now time.Time) []action {
	e, ok := t.eps[k]
	if !ok || e.st != joining || e.gen != gen {
		// Unknown join (cannot happen: a joining entry stays until its
		// result); a path it made must not be left behind.
		if err == nil {
			return []action{{kind: actRemove, ep: Endpoint{Index: k.index, IP: k.ip}, id: id, reason: "join no longer wanted"}}
		}
		return nil
	}
	if err != nil {
		acts := []action{{kind: actJoinFailed, ep: e.ep, backup: e.backup, err: err}}
		if e.unwanted != "" {
			delete(t.eps, k)
			return acts
		}
		e.st, e.due = failed, now.Add(t.retry)
		return acts
	}
	acts := []action{{kind: actJoined, ep: e.ep, backup: e.backup, id: id}}
	if e.unwanted != "" {
		delete(t.eps, k)
		return append(acts, action{kind: actRemove, ep: e.ep, backup: e.backup, id: id, reason: e.unwanted})
	}
	e.st, e.id = joined, id
	return append(acts, t.reconcile(now)...)
}

// next returns when the earliest pending step is due, if any.
func (t *table) next() (time.Time, bool) {
	var at time.Time
	found := false
	for _, e := range t.eps {
		pending := e.st == leaving || t.attached && (e.st == ready || e.st == failed)
		if pending && (!found || e.due.Before(at)) {
			at, found = e.due, true
		}
	}
	return at, found
}
