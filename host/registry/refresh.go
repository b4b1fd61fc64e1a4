package registry

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/go-hclog"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/toolview"
)

// onNotification handles a server notification. It runs on the
// transport's reader, so it only records and signals: a tool-list change
// marks the server dirty for its refresher, a log entry is written.
func (s *server) onNotification(n mcpvalue.Notification) {
	switch n.Method {
	case mcpvalue.MethodToolsListChanged:
		s.dirty.Store(true)
		select {
		case s.refreshKick <- struct{}{}:
		default:
		}
	case mcpvalue.MethodMessage:
		s.serverLog(n.Params)
	case mcpvalue.MethodProgress:
		s.progress.deliver(n)
	case mcpvalue.MethodPromptsListChanged:
		s.m.changed(Change{Server: s.cfg.Name, Lists: ChangedPrompts})
	case mcpvalue.MethodResourcesListChanged:
		s.m.changed(Change{Server: s.cfg.Name, Lists: ChangedResources})
	}
}

// refresher re-lists the tools after list_changed notifications, one
// refresh at a time: notifications that arrive during a refresh only mark
// the server dirty again, so a burst costs a handful of listings.
func (s *server) refresher() {
	defer close(s.refreshDone)
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.refreshKick:
		}
		for s.dirty.Swap(false) {
			if s.ctx.Err() != nil {
				return
			}
			s.refresh()
		}
	}
}

// refresh re-lists the tools of the live session and registers what
// changed, logging a warning naming added and removed tools.
func (s *server) refresh() {
	c := s.current()
	if c == nil || c.dead() {
		return // the next connect lists the tools anyway
	}
	caps := c.sess.Capabilities()
	if caps.Tools == nil {
		return
	}
	s.refreshes.Add(1)
	s.listMu.Lock()
	tools, err := s.listTools(c.sess)
	var added, removed []string
	var redefined bool
	if err == nil {
		added, removed = s.storeTools(tools, caps)
		redefined = s.offer(c.sess)
	}
	s.listMu.Unlock()
	if err != nil {
		s.log.Warn("tools/list after list_changed failed", "error", toolview.Redact(oneLine(err.Error())))
		return
	}
	if len(added) == 0 && len(removed) == 0 {
		if redefined {
			s.m.rebuild()
		}
		return
	}
	s.m.rebuild()
	s.log.Warn("tools changed dynamically — added: " + joinOrNone(added) + "; removed: " + joinOrNone(removed) +
		". Verify these changes are expected.")
}

func joinOrNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// serverLog writes a notifications/message entry to the host log as
// "MCP server log [<server>/<logger>]: <data>" at the mapped level, the
// data capped at MaxServerLogLen characters. A server logs at most
// log_lines_per_second lines a second (bursts of log_burst);
// the lines over that are dropped, and counted in a warning written with
// its next line that passes, or when it stops.
func (s *server) serverLog(p map[string]any) {
	ok, dropped := s.logLimit.Allow(s.cfg.Name)
	if !ok {
		return
	}
	s.logDropped(dropped)
	level, _ := p["level"].(string)
	logger, _ := p["logger"].(string)
	var data string
	switch d := p["data"].(type) {
	case string:
		data = d
	case nil:
	default:
		b, err := json.Marshal(d)
		if err != nil {
			data = "<unprintable>"
		} else {
			data = string(b)
		}
	}
	if r := []rune(data); len(r) > MaxServerLogLen {
		data = string(r[:MaxServerLogLen]) + "…"
	}
	name := s.cfg.Name
	if logger != "" {
		name += "/" + logger
	}
	s.m.log.Log(serverLogLevel(level), "MCP server log ["+name+"]: "+data)
}

// logDropped reports n log lines of the server that were not written.
func (s *server) logDropped(n int) {
	if n <= 0 {
		return
	}
	lines := "lines"
	if n == 1 {
		lines = "line"
	}
	s.log.Warn(fmt.Sprintf("%d log %s from the server dropped: it sent more than %d a second (bursts of %d); raise log_lines_per_second or log_burst in its entry in config.yaml",
		n, lines, s.logLimit.Rate(), s.logLimit.Burst()))
}

// serverLogLevel maps an MCP logging level to the host's.
func serverLogLevel(level string) hclog.Level {
	switch strings.ToLower(level) {
	case "debug":
		return hclog.Debug
	case "info", "notice":
		return hclog.Info
	case "warning":
		return hclog.Warn
	case "error", "critical", "alert", "emergency":
		return hclog.Error
	}
	return hclog.Info
}
