package registry

import (
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/offered"
)

// ToolRecord is the registry's own record of the tool a model-visible
// name reaches when it is called: what an approval gate decides from,
// whatever path the call took (the chat's loop, tool search, a gateway).
// It never comes from what a caller was offered or says about the tool.
type ToolRecord struct {
	// Name is the model-visible name (mcp_<server>_<tool>).
	Name string
	// Server is the configured server the call goes to; StateKey is its
	// config.Server.StateKey, under which allow-always grants are kept.
	Server, StateKey string
	// Tool is the tool's MCP name (for a utility tool, the utility).
	Tool string
	// Utility is "" for a server's own tool, else the utility tool it is
	// (toolview.UtilityListResources...).
	Utility string
	// Annotations are the tool's annotations as the server lists it now
	// (zero when its last listing does not hold it: a tool of a server
	// that is down).
	Annotations mcpvalue.Annotations
	// Approved are the annotations of the tool's definition the person
	// approved (the drift baseline in package offered); nil when no
	// definition of it was approved or the baseline cannot be read.
	Approved *mcpvalue.Annotations
}

// Resolve returns the record of the tool that a call of the model-visible
// name would run, resolved exactly as Call resolves it: a filtered or
// withheld tool, or one no server offers, does not exist, and the error
// is the *CallError Call would report (its message is ready for the
// model).
func (m *Manager) Resolve(name string) (ToolRecord, error) {
	t, err := m.resolve(name)
	if err != nil {
		return ToolRecord{}, err
	}
	rec := ToolRecord{Name: name, Server: t.ref.Server, StateKey: m.StateKey(t.ref.Server), Tool: t.ref.Tool, Utility: t.utility,
		Annotations: t.ann}
	if t.srv == nil || t.utility != "" {
		return rec, nil
	}
	rec.Approved = m.approvedAnnotations(t.srv, t.ref.Tool)
	return rec, nil
}

// approvedAnnotations are the safety hints (destructiveHint,
// readOnlyHint) of tool in s's approved baseline, nil when it has none (no
// home, nothing approved yet, or an approval without hints). A baseline
// that cannot be read never gets here: it withholds the server's tools.
func (m *Manager) approvedAnnotations(s *server, tool string) *mcpvalue.Annotations {
	st := m.off.store
	if st == nil {
		return nil
	}
	b, err := st.Baseline(s.cfg.StateKey())
	if err != nil || b == nil {
		return nil
	}
	a, ok := b.Tools[offered.ToolKey(tool)]
	if !ok || a.Hints == nil {
		return nil
	}
	return &mcpvalue.Annotations{Destructive: a.Hints.Destructive, ReadOnly: a.Hints.ReadOnly}
}
