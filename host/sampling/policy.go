// Package sampling answers a server's sampling/createMessage with the
// host's model (host/model) under the per-server policy of the server
// entry's sampling: block: enabled, the model the person chose
// (sampling.model, else model.default; a server's modelPreferences hint
// only when allowed_models lists it), max_tokens_cap, timeout, the limits
// (max_rpm in a sliding minute, max_per_day and max_tokens_per_day in a
// sliding day, counted per server state key in state.db across
// processes), max_tool_rounds and the audit log_level. It converts MCP
// sampling messages and tools to chat-completion ones and the model's
// answer back, bounds what a server sends (messages, text, images), and
// keeps per-server metrics (requests, errors, tokens, tool uses), also in
// $HERMES_HOME/sampling_metrics.json so that 'hermes mcp test' shows
// them. It does not talk to a terminal.
package sampling

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/fields"
)

// Defaults of the sampling: block.
const (
	DefaultMaxTokensCap = 4096
	DefaultTimeout      = 30 * time.Second
	DefaultMaxRPM       = 10
	// DefaultMaxPerDay bounds a server's requests in any 24 hours
	// (sampling.max_per_day).
	DefaultMaxPerDay = 200
	// DefaultMaxTokensPerDay bounds a server's tokens in any 24 hours
	// (sampling.max_tokens_per_day), the requests still running counted
	// at their max_tokens.
	DefaultMaxTokensPerDay = 200_000
	DefaultMaxToolRounds   = 5
	DefaultLogLevel        = "info"
	// DefaultMaxMessages bounds the messages of one request
	// (sampling.max_messages).
	DefaultMaxMessages = 200
	// DefaultMaxTextKB bounds the text of one request, all messages and
	// the system prompt together (sampling.max_text_kb, 1 MiB).
	DefaultMaxTextKB = 1024
	// DefaultMaxImageKB bounds one image, base64 (sampling.max_image_kb,
	// 8 MiB).
	DefaultMaxImageKB = 8192
)

// Policy is one server's sampling: block, defaults applied.
type Policy struct {
	Enabled bool
	// Model replaces model.default for this server.
	Model        string
	MaxTokensCap int
	Timeout      time.Duration
	// MaxRPM, MaxPerDay and MaxTokensPerDay are the limits, counted per
	// server state key over every process of the $HERMES_HOME.
	MaxRPM          int
	MaxPerDay       int
	MaxTokensPerDay int64
	// AllowedModels are the models a server's hint may choose.
	AllowedModels []string
	// MaxToolRounds is how many tool_use answers in a row a server may
	// get; 0 turns tool loops off.
	MaxToolRounds int
	// LogLevel is the audit log's level: debug, info or warning.
	LogLevel string
	// Bounds of a request.
	MaxMessages  int
	MaxTextBytes int
	MaxImageB64  int
}

// DefaultPolicy is the policy of a server without a sampling: block.
func DefaultPolicy() Policy {
	return Policy{
		Enabled:         true,
		MaxTokensCap:    DefaultMaxTokensCap,
		Timeout:         DefaultTimeout,
		MaxRPM:          DefaultMaxRPM,
		MaxPerDay:       DefaultMaxPerDay,
		MaxTokensPerDay: DefaultMaxTokensPerDay,
		MaxToolRounds:   DefaultMaxToolRounds,
		LogLevel:        DefaultLogLevel,
		MaxMessages:     DefaultMaxMessages,
		MaxTextBytes:    DefaultMaxTextKB << 10,
		MaxImageB64:     DefaultMaxImageKB << 10,
	}
}

// ParsePolicy reads a server's sampling: block (config.Server.Sampling).
// Numbers are read as the original does: a numeric string counts, NaN,
// infinities and what is not a number give the default, and a value is
// at least 1 (0 for max_tool_rounds). A value of the wrong kind
// elsewhere is an error naming the key.
func ParsePolicy(raw map[string]any) (Policy, error) {
	p := DefaultPolicy()
	for k, v := range raw {
		key := "sampling." + k
		switch k {
		case "enabled":
			b, ok := boolish(v)
			if !ok {
				return p, fmt.Errorf("%s must be true or false, got %v", key, v)
			}
			p.Enabled = b
		case "model":
			s, ok := v.(string)
			if !ok && v != nil {
				return p, fmt.Errorf("%s must be a model name, got %v", key, v)
			}
			p.Model = strings.TrimSpace(s)
		case "max_tokens_cap":
			p.MaxTokensCap = int(safeNumeric(v, DefaultMaxTokensCap, 1))
		case "timeout":
			p.Timeout = time.Duration(safeNumeric(v, DefaultTimeout.Seconds(), 1) * float64(time.Second))
		case "max_rpm":
			p.MaxRPM = int(safeNumeric(v, DefaultMaxRPM, 1))
		case "max_per_day":
			p.MaxPerDay = int(safeNumeric(v, DefaultMaxPerDay, 1))
		case "max_tokens_per_day":
			p.MaxTokensPerDay = int64(safeNumeric(v, DefaultMaxTokensPerDay, 1))
		case "max_tool_rounds":
			p.MaxToolRounds = int(safeNumeric(v, DefaultMaxToolRounds, 0))
		case "allowed_models":
			switch list := v.(type) {
			case nil:
			case []any:
				for _, m := range list {
					s, ok := m.(string)
					if !ok {
						return p, fmt.Errorf("%s must be a list of model names, got %v", key, m)
					}
					p.AllowedModels = append(p.AllowedModels, s)
				}
			case string:
				p.AllowedModels = []string{list}
			default:
				return p, fmt.Errorf("%s must be a list of model names, got %v", key, v)
			}
		case "log_level":
			s, _ := v.(string)
			switch s = strings.ToLower(strings.TrimSpace(s)); s {
			case "debug", "info", "warning":
				p.LogLevel = s
			case "warn":
				p.LogLevel = "warning"
			default:
				return p, fmt.Errorf("%s must be debug, info or warning, got %v", key, v)
			}
		case "max_messages":
			p.MaxMessages = int(safeNumeric(v, DefaultMaxMessages, 1))
		case "max_text_kb":
			p.MaxTextBytes = int(safeNumeric(v, DefaultMaxTextKB, 1)) << 10
		case "max_image_kb":
			p.MaxImageB64 = int(safeNumeric(v, DefaultMaxImageKB, 1)) << 10
		}
	}
	return p, nil
}

// safeNumeric is the original's _safe_numeric: a number or numeric
// string, else def; NaN and infinities give def; at least lo; capped so
// that a huge value cannot overflow.
func safeNumeric(v any, def, lo float64) float64 {
	f, ok := fields.Number(v)
	if !ok {
		return def
	}
	return math.Min(math.Max(f, lo), 1<<30)
}

func boolish(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0":
			return false, true
		}
	}
	return false, false
}
