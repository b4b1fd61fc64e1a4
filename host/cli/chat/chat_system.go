package chat

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/systemprompt"
	"github.com/hermes-agent/hermes/host/toolview"
)

// SystemText builds the chat's system message from the registry's
// servers (their states and instructions) and cfg's instructions: keys
// (host/systemprompt).
func SystemText(m *registry.Manager, cfg *config.Config) string {
	var servers []systemprompt.Server
	for _, st := range m.Status() {
		if st.State == registry.StateDisabled {
			continue
		}
		s := systemprompt.Server{Name: st.Name, Tools: len(st.Registered)}
		switch {
		case st.State == registry.StateConnected:
			s.State = systemprompt.Connected
		case st.State == registry.StateIdle:
			s.State = systemprompt.Idle
		case st.State == registry.StateConnecting && st.Error == "":
			s.State = systemprompt.Connecting
		default:
			s.State, s.Reason = systemprompt.Failing, st.Error
		}
		if srv := CfgServer(cfg, st.Name); srv != nil && srv.NoInstructions {
			s.NoInstructions = true
		} else if s.State == systemprompt.Connected || s.State == systemprompt.Idle {
			s.Instructions = m.Instructions(st.Name)
		}
		servers = append(servers, s)
	}
	return systemprompt.Build(servers)
}

// refreshSystem rebuilds the system message (at the start and after
// /reload-mcp), gives it to the loop and counts it toward tool search's
// token threshold. It reports whether the text changed.
func (s *ChatSession) refreshSystem() bool {
	text := SystemText(s.m, s.cfg)
	changed := text != s.loop.System
	s.loop.SetSystem(text)
	if s.search != nil {
		s.search.SetFixedTokens(toolview.EstimateTextTokens(text))
	}
	return changed
}

// searchNote says what the model is offered when tool search is active
// ("" when it is not): the counts of /tools, /mcp and the banner are the
// registered tools, not what the model gets.
func (s *ChatSession) searchNote() string {
	all := s.m.Tools()
	if !s.search.Active(all) {
		return ""
	}
	tools, tokens := s.search.Over()
	over := fmt.Sprintf("over %d tools", tools)
	if tools <= 0 {
		over = fmt.Sprintf("over %d tokens; the definitions and the servers' instructions are about %d",
			tokens, toolview.EstimateTokens(all)+toolview.EstimateTextTokens(s.loop.System))
	}
	note := fmt.Sprintf("tool search is on (tools.search_over: %s): the model is offered %s and %s and loads what it needs",
		over, toolview.SearchToolsName, toolview.LoadToolsName)
	if loaded := s.search.Loaded(); len(loaded) > 0 {
		note += fmt.Sprintf(" (loaded so far: %s)", strings.Join(loaded, ", "))
	}
	return note
}

// ServerBlockChanges names, per server kept by a reload, each block of
// its entry that affects a call and changed from was to now: one line
// each (the server is reconnected with them).
func ServerBlockChanges(was, now *config.Config) []string {
	if was == nil || now == nil {
		return nil
	}
	var out []string
	for _, n := range now.Servers {
		o := was.Server(n.Name)
		if o == nil {
			continue
		}
		blocks := []struct {
			key     string
			changed bool
		}{
			{"sampling", !reflect.DeepEqual(o.Sampling, n.Sampling)},
			{"elicitation", !reflect.DeepEqual(o.Elicitation, n.Elicitation)},
			{"roots", o.NoRoots != n.NoRoots},
			{"tools (filter)", !reflect.DeepEqual(o.Tools, n.Tools)},
			{"instructions", o.NoInstructions != n.NoInstructions},
		}
		for _, b := range blocks {
			if b.changed {
				out = append(out, fmt.Sprintf("%s of '%s' changed", b.key, n.Name))
			}
		}
	}
	return out
}
