package gateway

import (
	"context"
	"slices"
)

// Registries serves resources, prompts and completions (Catalog) from the
// same registries as tools: the shared servers' from the shared registry,
// the per-person servers' from the person's own registry once it is open,
// and before that, for listing, from the template.

// Sources are the shared servers, in config order, then the per-person
// ones: from p's registry when it is open (held until done), else from the
// template.
func (r *Registries) Sources(p Person) ([]Source, func()) {
	r.mu.Lock()
	shared, template, perUser := r.Shared, r.Template, slices.Clone(r.PerUser)
	var own *personRegistry
	if pr := r.people[p.Subject]; p.Subject != "" && pr != nil && isReady(pr) && pr.err == nil {
		own = pr
		pr.inFlight++
	}
	r.mu.Unlock()
	done := func() {}
	if own != nil {
		done = func() {
			r.mu.Lock()
			own.inFlight--
			r.mu.Unlock()
		}
	}
	var out []Source
	if shared != nil {
		for _, name := range shared.ServerNames() {
			out = append(out, Source{Server: name, Upstream: shared, Shared: true})
		}
	}
	for _, name := range perUser {
		switch {
		case own != nil:
			out = append(out, Source{Server: name, Upstream: own.m})
		case template != nil:
			out = append(out, Source{Server: name, Upstream: template, Shared: true})
		}
	}
	return out, done
}

// isReady reports whether pr's registry has been built (or failed to be).
func isReady(pr *personRegistry) bool {
	select {
	case <-pr.ready:
		return true
	default:
		return false
	}
}

// Open is the shared registry for a shared server, and p's own registry
// (built on first use) for a per-person one.
func (r *Registries) Open(ctx context.Context, p Person, server string) (Upstream, func(), error) {
	r.mu.Lock()
	shared, perUser := r.Shared, slices.Contains(r.PerUser, server)
	r.mu.Unlock()
	if !perUser {
		return shared, func() {}, nil
	}
	m, done, err := r.person(ctx, p.Subject)
	if err != nil {
		return nil, nil, err
	}
	return m, done, nil
}
