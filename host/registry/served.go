package registry

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/mcpvalue"
)

// This file is what a registry serves beside tools to a caller that serves
// its servers to others as MCP (the gateway): each server's resources,
// resource templates and prompts as the server lists them, a read, a get
// and a completion, each through the same session rules as a tool call
// (doCallGeneric: a lazy server starts, an expired session reconnects
// once, the server's timeout bounds it), and a signal when any of it may
// have changed.

// Lists names lists of a server, for a Change.
type Lists uint8

// The lists a Change names.
const (
	ChangedTools Lists = 1 << iota
	ChangedResources
	ChangedPrompts
)

// Change says that lists of the registry may have changed.
type Change struct {
	// Server is the server whose lists may have changed; "" with
	// ChangedTools alone when the registered tools were rebuilt (a server
	// started, stopped, reloaded or told of new tools).
	Server string
	Lists  Lists
}

// watchers are the functions OnChange registered.
type watchers struct {
	mu  sync.Mutex
	fns []func(Change)
}

// OnChange has fn told of every Change from now on: the registered tools
// rebuilt, a server's session (re)started (its resources and prompts may
// be new), or a server's resources/list_changed or prompts/list_changed.
// fn runs on the registry's own goroutines and must not block or call back
// into the registry; hand the work to a goroutine of your own.
func (m *Manager) OnChange(fn func(Change)) {
	m.watch.mu.Lock()
	m.watch.fns = append(m.watch.fns, fn)
	m.watch.mu.Unlock()
}

// changed tells the OnChange functions of c.
func (m *Manager) changed(c Change) {
	m.watch.mu.Lock()
	fns := slices.Clone(m.watch.fns)
	m.watch.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
}

// ServerNames are the configured servers' names, in config order.
func (m *Manager) ServerNames() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, len(m.order))
	for i, s := range m.order {
		out[i] = s.cfg.Name
	}
	return out
}

// ServerCapabilities are the capabilities server name declared at its last
// listing (from its record for a server not started yet); known is false
// until there is one.
func (m *Manager) ServerCapabilities(name string) (caps mcpvalue.Capabilities, known bool) {
	s := m.server(name)
	if s == nil {
		return mcpvalue.Capabilities{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps, s.listed
}

// offers reports whether s may offer what has reports of a server's
// capabilities: false only when its last listing said it does not (a
// server never listed is asked).
func (s *server) offers(has func(mcpvalue.Capabilities) bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.listed || has(s.caps)
}

func hasResources(c mcpvalue.Capabilities) bool { return mcpvalue.HasSchema(c.Resources) }
func hasPrompts(c mcpvalue.Capabilities) bool   { return mcpvalue.HasSchema(c.Prompts) }

// served is server name for a request of what, or a *CallError saying it
// is not configured.
func (m *Manager) served(name, what string) (*server, error) {
	s := m.server(name)
	if s == nil {
		return nil, &CallError{Server: name, Tool: what, Code: failure.CodeUnknownServer, Msg: fmt.Sprintf("MCP server '%s' is not configured", name)}
	}
	return s, nil
}

// ServerResources lists every resource of server name (ListResources:
// pagination up to MaxListPages within ListBound), starting it if it is
// idle. A server without the resources capability, or whose entry turns
// them off (tools.resources: false), has none.
func (m *Manager) ServerResources(ctx context.Context, name string) ([]mcpvalue.Resource, error) {
	s, err := m.served(name, methodResourcesList)
	if err != nil || !s.cfg.Tools.Resources || !s.offers(hasResources) {
		return nil, err
	}
	return doCallGeneric(s, ctx, methodResourcesList, func(ctx context.Context, c *conn) ([]mcpvalue.Resource, error) {
		if !hasResources(c.sess.Capabilities()) {
			return nil, nil
		}
		return ListResources(ctx, c.sess, s.cfg)
	})
}

// ServerResourceTemplates lists every resource template of server name
// (ListResourceTemplates), as ServerResources lists its resources.
func (m *Manager) ServerResourceTemplates(ctx context.Context, name string) ([]mcpvalue.ResourceTemplate, error) {
	s, err := m.served(name, methodResourcesTemplatesList)
	if err != nil || !s.cfg.Tools.Resources || !s.offers(hasResources) {
		return nil, err
	}
	return doCallGeneric(s, ctx, methodResourcesTemplatesList, func(ctx context.Context, c *conn) ([]mcpvalue.ResourceTemplate, error) {
		if !hasResources(c.sess.Capabilities()) {
			return nil, nil
		}
		return ListResourceTemplates(ctx, c.sess, s.cfg)
	})
}

// ServerPrompts lists every prompt of server name (ListPrompts), as
// ServerResources lists its resources (tools.prompts: false turns them
// off).
func (m *Manager) ServerPrompts(ctx context.Context, name string) ([]mcpvalue.Prompt, error) {
	s, err := m.served(name, methodPromptsList)
	if err != nil || !s.cfg.Tools.Prompts || !s.offers(hasPrompts) {
		return nil, err
	}
	return doCallGeneric(s, ctx, methodPromptsList, func(ctx context.Context, c *conn) ([]mcpvalue.Prompt, error) {
		if !hasPrompts(c.sess.Capabilities()) {
			return nil, nil
		}
		return ListPrompts(ctx, c.sess, s.cfg)
	})
}

// ListPrompts lists every prompt srv offers on cl, paginated and bounded
// like ListResources.
func ListPrompts(ctx context.Context, cl Lister, srv *config.Server) ([]mcpvalue.Prompt, error) {
	return collectPages(ctx, srv, methodPromptsList, cl.ListPromptsPage)
}

// Methods of the requests served here, named in their failures.
const (
	methodResourcesRead = "resources/read"
	methodPromptsGet    = "prompts/get"
	methodComplete      = "completion/complete"
)

// ReadResource reads the resource at uri of server name (resources/read),
// its contents as the server gave them.
func (m *Manager) ReadResource(ctx context.Context, name, uri string) ([]mcpvalue.ResourceContents, error) {
	s, err := m.served(name, methodResourcesRead)
	if err != nil {
		return nil, err
	}
	if !s.cfg.Tools.Resources {
		return nil, &CallError{Server: name, Tool: methodResourcesRead, Code: failure.CodeFiltered,
			Msg: fmt.Sprintf("the resources of MCP server '%s' are turned off (tools.resources: false)", name)}
	}
	return doCallGeneric(s, ctx, methodResourcesRead, func(ctx context.Context, c *conn) ([]mcpvalue.ResourceContents, error) {
		return c.sess.ReadResource(ctx, uri)
	})
}

// GetPrompt gets prompt of server name with args (prompts/get).
func (m *Manager) GetPrompt(ctx context.Context, name, prompt string, args map[string]string) (*mcpvalue.PromptResult, error) {
	s, err := m.served(name, methodPromptsGet)
	if err != nil {
		return nil, err
	}
	if !s.cfg.Tools.Prompts {
		return nil, &CallError{Server: name, Tool: methodPromptsGet, Code: failure.CodeFiltered,
			Msg: fmt.Sprintf("the prompts of MCP server '%s' are turned off (tools.prompts: false)", name)}
	}
	return doCallGeneric(s, ctx, methodPromptsGet, func(ctx context.Context, c *conn) (*mcpvalue.PromptResult, error) {
		return c.sess.GetPrompt(ctx, prompt, args)
	})
}

// Complete asks server name to complete an argument of one of its prompts
// or resource templates (completion/complete). A server that did not
// declare completions offers none: an empty completion, no request.
func (m *Manager) Complete(ctx context.Context, name string, req mcpvalue.CompletionRequest) (mcpvalue.Completion, error) {
	s, err := m.served(name, methodComplete)
	if err != nil {
		return mcpvalue.Completion{}, err
	}
	return doCallGeneric(s, ctx, methodComplete, func(ctx context.Context, c *conn) (mcpvalue.Completion, error) {
		if !mcpvalue.HasSchema(c.sess.Capabilities().Completions) {
			return mcpvalue.Completion{}, nil
		}
		return c.sess.Complete(ctx, req)
	})
}
