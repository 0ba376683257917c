//go:build !linux

package pathmgr

import (
	"context"
	"errors"
)

// otherSource is the Source on systems without netlink: it fails.
type otherSource struct{}

// NewNetlinkSource returns the Source that watches this host's links and
// addresses over rtnetlink; on this system its Watch fails, because
// netlink is Linux only. Give Config.Source another Source.
func NewNetlinkSource() Source { return otherSource{} }

// Watch fails: there is no netlink here.
func (otherSource) Watch(ctx context.Context, out chan<- Update) error {
	return errors.New("pathmgr: watching interfaces needs Linux (netlink)")
}
