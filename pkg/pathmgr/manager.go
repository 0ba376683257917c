package pathmgr

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/mpqsched/mpqsched/pkg/session"
	"github.com/mpqsched/mpqsched/sched"
)

// Defaults of Config.
const (
	DefaultDebounce      = 200 * time.Millisecond // an address must stay usable (or gone) this long before a join (or removal)
	DefaultJoinTimeout   = 10 * time.Second       // longest a join's handshake may take
	DefaultRetryInterval = 5 * time.Second        // pause after a failed join before the next over the same address
	DefaultSyncTimeout   = 5 * time.Second        // longest Start waits for the Source's first snapshot
)

// Pauses and bounds of the manager's goroutines.
const (
	watchRetry = time.Second     // pause before Source.Watch is called again after it failed
	closeWait  = 5 * time.Second // longest Close waits for each goroutine (joins are cancelled first)
)

// ErrClosed is returned by a Manager that is closed (or whose Start
// context ended).
var ErrClosed = errors.New("pathmgr: closed")

// Joiner adds and removes the paths of one multipath session, as
// *session.Session does.
type Joiner interface {
	// AddPath joins a path that sends through pc to remote. It owns pc from
	// then on (the manager closes it anyway after an error).
	AddPath(ctx context.Context, pc net.PacketConn, remote net.Addr, opts session.PathOptions) (sched.PathID, error)
	// RemovePath removes the path id.
	RemovePath(id sched.PathID) error
}

var _ Joiner = (*session.Session)(nil)

// Config configures a Manager. Only Remote is required.
type Config struct {
	Source        Source        // where links and addresses come from; nil: NewNetlinkSource()
	Remote        net.Addr      // the server; with a *net.UDPAddr, only addresses of its family are used
	Policy        Policy        // which addresses carry paths, and which are backups
	Debounce      time.Duration // 0: DefaultDebounce; negative: act on every change at once
	JoinTimeout   time.Duration // 0: DefaultJoinTimeout
	RetryInterval time.Duration // 0: DefaultRetryInterval
	SyncTimeout   time.Duration // 0: DefaultSyncTimeout

	// Listen opens the socket of a new path; nil: Listen (bound to the
	// address and to the interface).
	Listen func(ep Endpoint, remote net.Addr) (net.PacketConn, error)
	// OnEvent, if set, is called with every event, in order, on the
	// manager's goroutine: it must return quickly and must not call the
	// Manager.
	OnEvent func(Event)
	// Logf, if set, gets every event as one line, and the Source's failures.
	Logf func(format string, args ...any)
}

func (c Config) withDefaults() (Config, error) {
	if c.Remote == nil {
		return c, errors.New("pathmgr: Config.Remote is required")
	}
	if c.Source == nil {
		c.Source = NewNetlinkSource()
	}
	if c.Debounce == 0 {
		c.Debounce = DefaultDebounce
	}
	c.Debounce = max(c.Debounce, 0)
	if c.JoinTimeout <= 0 {
		c.JoinTimeout = DefaultJoinTimeout
	}
	if c.RetryInterval <= 0 {
		c.RetryInterval = DefaultRetryInterval
	}
	if c.SyncTimeout <= 0 {
		c.SyncTimeout = DefaultSyncTimeout
	}
	if c.Listen == nil {
		c.Listen = Listen
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	return c, nil
}

// familyOf is 4 or 6 for a UDP address, 0 (any) otherwise.
func familyOf(a net.Addr) int {
	u, ok := a.(*net.UDPAddr)
	switch {
	case !ok || u.IP == nil:
		return 0
	case u.IP.To4() != nil:
		return 4
	}
	return 6
}

// Manager follows the host's interfaces and keeps one path per usable
// address. Create it with New, then Start, Attach and Close.
type Manager struct {
	cfg Config

	mu       sync.Mutex
	t        *table
	started  bool
	attached bool

	ctx     context.Context
	cancel  context.CancelFunc
	updates chan Update
	results chan joinResult
	attachC chan attachMsg
	synced  chan struct{} // closed at the first Synced
	loopEnd chan struct{} // closed when the loop has returned
	srcEnd  chan struct{} // closed when the Source's goroutine has returned

	// Owned by the loop goroutine.
	j        Joiner
	cancels  map[key]context.CancelFunc
	inflight int
}

// joinResult is what a join goroutine hands back.
type joinResult struct {
	k   key
	gen uint64
	id  sched.PathID
	err error
}

// attachMsg carries Attach's arguments to the loop.
type attachMsg struct {
	j     Joiner
	first Endpoint
	id    sched.PathID
}

// New checks cfg and returns a Manager that does nothing until Start.
func New(cfg Config) (*Manager, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	return &Manager{
		cfg:     c,
		t:       newTable(c.Policy, familyOf(c.Remote), c.Debounce, c.RetryInterval),
		updates: make(chan Update, 64),
		results: make(chan joinResult),
		attachC: make(chan attachMsg),
		synced:  make(chan struct{}),
		loopEnd: make(chan struct{}),
		srcEnd:  make(chan struct{}),
		cancels: map[key]context.CancelFunc{},
	}, nil
}

// Start starts watching and returns once the Source's first snapshot is in
// (Usable is then meaningful), or fails after Config.SyncTimeout. ctx bounds
// the manager's whole life: when it ends, the manager stops as after
// Close.
func (m *Manager) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("pathmgr: Start called twice")
	}
	m.started = true
	m.ctx, m.cancel = context.WithCancel(ctx)
	m.mu.Unlock()
	go m.watch()
	go m.loop()
	wait := time.NewTimer(m.cfg.SyncTimeout)
	defer wait.Stop()
	select {
	case <-m.synced:
		return nil
	case <-wait.C:
		m.Close()
		return fmt.Errorf("pathmgr: no interface snapshot within %v", m.cfg.SyncTimeout)
	case <-m.ctx.Done():
		m.Close()
		return ErrClosed
	}
}

// Usable lists the addresses usable now, preferred first (not a backup,
// then by interface index and address). Call it after Start to choose the
// first path.
func (m *Manager) Usable() []Endpoint {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.t.usable()
}

// IsBackup reports whether the policy makes a path over ep a backup.
func (m *Manager) IsBackup(ep Endpoint) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	l, ok := m.t.links[ep.Index]
	if !ok {
		l = Link{Index: ep.Index, Name: ep.Name}
	}
	return m.cfg.Policy.IsBackup(l)
}

// Attach hands the manager its session: first is the endpoint that already
// carries path id (the caller dialled it, with a socket from Listen). From
// then on the manager joins a path over each other usable address and
// removes the paths whose address goes away, first's included.
func (m *Manager) Attach(j Joiner, first Endpoint, id sched.PathID) error {
	m.mu.Lock()
	if !m.started || m.attached {
		m.mu.Unlock()
		return errors.New("pathmgr: Attach needs Start first and works once")
	}
	m.attached = true
	m.mu.Unlock()
	select {
	case m.attachC <- attachMsg{j: j, first: first, id: id}:
		return nil
	case <-m.loopEnd:
		return ErrClosed
	}
}

// Close stops watching and cancels the joins in flight, and returns when
// every goroutine of the manager has ended (or an error if one did not
// within a few seconds). Paths already joined stay in the session.
func (m *Manager) Close() error {
	m.mu.Lock()
	started := m.started
	m.mu.Unlock()
	if !started {
		return nil
	}
	m.cancel()
	t := time.NewTimer(2 * closeWait)
	defer t.Stop()
	for _, c := range []chan struct{}{m.loopEnd, m.srcEnd} {
		select {
		case <-c:
		case <-t.C:
			return errors.New("pathmgr: a goroutine did not stop in time")
		}
	}
	return nil
}
