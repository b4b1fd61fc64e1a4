package config

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"time"
)

// ServeKey is the top-level key of config.yaml holding the settings of
// `hermes mcp serve`.
const ServeKey = "mcp_serve"

// Defaults of the mcp_serve settings.
const (
	// DefaultServeMaxResultBytes bounds one tool result a bridge plugin
	// returns (mcp_serve.max_result_mb, 16 MiB).
	DefaultServeMaxResultBytes = 16 << 20
	// DefaultServeMaxRequestBytes bounds one HTTP request body a client
	// sends to `hermes mcp serve --http` (mcp_serve.max_request_mb, 4 MiB).
	DefaultServeMaxRequestBytes = 4 << 20
	// DefaultServeCallTimeout bounds one tool call (mcp_serve.call_timeout,
	// 360 s: longer than the longest events_wait of 300 s).
	DefaultServeCallTimeout = 360 * time.Second
)

// ServeSettings are the mcp_serve settings.
type ServeSettings struct {
	// MaxResultBytes bounds one tool result (max_result_mb).
	MaxResultBytes uint64
	// MaxRequestBytes bounds one HTTP request body (max_request_mb).
	MaxRequestBytes uint64
	// CallTimeout bounds one tool call (call_timeout, seconds).
	CallTimeout time.Duration
	// Bridges holds the block of each bridge plugin, keyed by the plugin's
	// name (mcp_serve.messaging: for hermes-bridge-messaging), ${VAR}s
	// resolved.
	Bridges map[string]map[string]any
}

// LoadServe reads the mcp_serve settings of <home>/config.yaml; a missing
// file or key gives the defaults. A value of the wrong type is an error
// naming the key. A ${VAR} is looked up in env (the run's environment, as
// LoadEnv's; nil is the process's), then in <home>/.env.
func LoadServe(home string, env func(string) (string, bool)) (*ServeSettings, error) {
	s := &ServeSettings{
		MaxResultBytes:  DefaultServeMaxResultBytes,
		MaxRequestBytes: DefaultServeMaxRequestBytes,
		CallTimeout:     DefaultServeCallTimeout,
		Bridges:         map[string]map[string]any{},
	}
	path := homedir.Dir(home).Config()
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	block, err := decodeTopMapping(path, src, ServeKey, "a mapping of settings")
	if err != nil || block == nil {
		return s, err
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	lookup := varLookupEnv(env, dotenv)
	d := &decoder{}
	for _, it := range block {
		key := keyString(it.Key)
		raw := plain(it.Value)
		var missing []string
		v := plain(interpolateValue(it.Value, lookup, &missing))
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: %s.%s needs ${%s}: set it in the environment or in %s", path, ServeKey, key, missing[0], homedir.Dir(home).DotEnv())
		}
		switch key {
		case "max_result_mb":
			s.MaxResultBytes = d.megabytes(ServeKey+"."+key, v, raw, DefaultServeMaxResultBytes>>20)
		case "max_request_mb":
			s.MaxRequestBytes = d.megabytes(ServeKey+"."+key, v, raw, DefaultServeMaxRequestBytes>>20)
		case "call_timeout":
			s.CallTimeout = d.seconds(ServeKey+"."+key, v, raw, DefaultServeCallTimeout)
		default:
			m, ok := v.(map[string]any)
			if !ok && v != nil {
				d.fail(ServeKey+"."+key, "want a mapping of the %s bridge's settings, got %s", key, got(raw))
				continue
			}
			s.Bridges[key] = m
		}
	}
	if d.err != nil {
		return nil, fmt.Errorf("%s: %w; fix the file", path, d.err)
	}
	return s, nil
}
