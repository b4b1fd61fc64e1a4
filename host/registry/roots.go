package registry

import (
	"context"
	"slices"
)

// NotifyRootsChanged tells every connected server that offers roots (on a
// revision before 2026-07-28, which asks for them with each request) that
// the host's roots changed, so that it asks for them again; roots.Set's
// OnChange calls it. It returns the names of the servers told. A server
// that cannot be told is logged and left alone.
func (m *Manager) NotifyRootsChanged(ctx context.Context) []string {
	m.mu.Lock()
	servers := slices.Clone(m.order)
	m.mu.Unlock()
	var told []string
	for _, s := range servers {
		c := s.current()
		if c == nil || c.dead() {
			continue
		}
		sent, err := c.sess.NotifyRootsChanged(ctx)
		if err != nil {
			s.log.Debug("cannot send roots/list_changed", "error", err)
			continue
		}
		if sent {
			told = append(told, s.cfg.Name)
		}
	}
	return told
}
