package config

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/fields"
)

// When a long-lived process (hermes chat, hermes mcp serve with tools)
// starts a server: the start:, idle_timeout: and prestart: keys of a server
// entry, and the top-level tools.search_over.
const (
	// StartLazy (start: lazy) registers a server's tools from the store of
	// what it offered last time and starts it on its first call. It is
	// the default where that record is fresh.
	StartLazy = "lazy"
	// StartEager (start: eager) connects the server at session start.
	StartEager = "eager"
	// DefaultIdleTimeout is idle_timeout's default: a lazily started
	// server with no call for this long is stopped and goes back to lazy.
	DefaultIdleTimeout = 5 * time.Minute
	// NeverIdle is Server.IdleTimeout for idle_timeout: 0 (never stopped).
	NeverIdle time.Duration = -1
	// maxIdleTimeout caps idle_timeout (a week); past it, write 0.
	maxIdleTimeout = 7 * 24 * time.Hour
)

// IdleAfter is how long the server may go without a call before it is
// stopped: DefaultIdleTimeout when idle_timeout is not set, 0 for never.
func (s *Server) IdleAfter() time.Duration {
	switch {
	case s.IdleTimeout == NeverIdle:
		return 0
	case s.IdleTimeout <= 0:
		return DefaultIdleTimeout
	}
	return s.IdleTimeout
}

// lazyKeys reads start:, idle_timeout: and prestart: of an entry into s.
func (d *decoder) lazyKeys(s *Server, v, raw map[string]any) {
	switch st := strings.ToLower(strings.TrimSpace(d.str("start", v["start"], raw["start"]))); st {
	case "":
	case StartLazy, StartEager:
		s.Start = st
	default:
		d.fail("start", "want lazy or eager, got %s", got(raw["start"]))
	}
	if iv := v["idle_timeout"]; iv != nil {
		f, ok := fields.Seconds(iv)
		switch {
		case !ok || f < 0:
			d.fail("idle_timeout", "want a number of seconds (0 for never), got %s", got(raw["idle_timeout"]))
		case f == 0:
			s.IdleTimeout = NeverIdle
		case time.Duration(f*float64(time.Second)) > maxIdleTimeout:
			d.fail("idle_timeout", "want at most %d seconds (a week), got %s; write 0 to never stop the server", int(maxIdleTimeout/time.Second), got(raw["idle_timeout"]))
		default:
			s.IdleTimeout = max(time.Duration(f*float64(time.Second)), time.Millisecond)
		}
	}
	s.Prestart = d.boolish("prestart", v["prestart"], raw["prestart"], false)
}

// ToolsKey is the top-level key of config.yaml holding the host-wide tool
// settings (search_over).
const ToolsKey = "tools"

// SearchOver is tools.search_over: past this many tools, or this many
// estimated tokens of tool definitions, the model is offered a search tool
// instead of every definition. The zero value is off.
type SearchOver struct {
	// Tools is a count of tools; Tokens an estimate of the tokens of their
	// definitions. At most one is set.
	Tools, Tokens int
}

// Off reports whether tool search is off (search_over not set).
func (o SearchOver) Off() bool { return o.Tools <= 0 && o.Tokens <= 0 }

// maxSearchOver caps search_over (either unit).
const maxSearchOver = 10_000_000

// LoadSearchOver returns tools.search_over of <home>/config.yaml; a missing
// file or key is off.
func LoadSearchOver(home string) (SearchOver, error) {
	path := homedir.Dir(home).Config()
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return SearchOver{}, nil
	}
	if err != nil {
		return SearchOver{}, err
	}
	block, err := decodeTopMapping(path, src, ToolsKey, "a mapping of settings (search_over)")
	if err != nil || block == nil {
		return SearchOver{}, err
	}
	for _, it := range block {
		if keyString(it.Key) != "search_over" {
			continue
		}
		o, err := ParseSearchOver(plain(it.Value))
		if err != nil {
			return SearchOver{}, fmt.Errorf("%s: %s.search_over: %w", path, ToolsKey, err)
		}
		return o, nil
	}
	return SearchOver{}, nil
}

// ParseSearchOver reads a search_over value: a count of tools (40), or a
// token estimate ("20000 tokens", "20k tokens").
func ParseSearchOver(v any) (SearchOver, error) {
	bad := fmt.Errorf("want a number of tools (e.g. 40) or of tokens (e.g. \"20k tokens\"), got %s", got(v))
	if s, ok := v.(string); ok {
		t := strings.ToLower(strings.TrimSpace(s))
		if rest, ok := strings.CutSuffix(t, "tokens"); ok {
			rest = strings.TrimSpace(rest)
			mult := 1
			if r, ok := strings.CutSuffix(rest, "k"); ok {
				rest, mult = r, 1000
			}
			n, err := strconv.Atoi(strings.TrimSpace(rest))
			if err != nil || n <= 0 || n*mult > maxSearchOver {
				return SearchOver{}, bad
			}
			return SearchOver{Tokens: n * mult}, nil
		}
	}
	f, ok := fields.Number(v)
	if !ok || f <= 0 || f > maxSearchOver || f != float64(int(f)) {
		return SearchOver{}, bad
	}
	return SearchOver{Tools: int(f)}, nil
}
