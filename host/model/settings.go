// Package model is the host's client of a model endpoint: any
// OpenAI-compatible chat-completions API (OpenAI, OpenRouter, Ollama,
// vLLM, llama.cpp's server, LM Studio). It owns the model: block of
// config.yaml once read (Settings; the file itself is host/config's), the
// API key's lookup (never logged or printed), the typed errors (Error,
// Kind) whose one-line messages say what to do, and Client, which keeps
// the model plugin hermes-model-openai running for a chat (started through
// host/supervisor on first use, stopped when idle, started again when it
// died) and asks it for each completion. The conversation's types are the
// model plugin contract's (sdk/model). The calls themselves (streaming,
// tool calls, retries on 429 and 5xx, the response bound) are made by
// github.com/openai/openai-go/v3 in the plugin (host/model/openaichat):
// linked into hermes, openai-go's initialisation would cost every command.
package model

import (
	"fmt"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/fields"
	sdkmodel "github.com/hermes-agent/hermes/sdk/model"
)

// Key is the config.yaml key of the model: block.
const Key = "model"

// Defaults of the model: block.
const (
	// DefaultBaseURL is model.base_url's default.
	DefaultBaseURL = "https://api.openai.com/v1"
	// DefaultAPIKeyEnv is model.api_key_env's default: the variable,
	// in the environment or $HERMES_HOME/.env, that holds the key.
	DefaultAPIKeyEnv = "OPENAI_API_KEY"
	// DefaultMaxResponseKB is model.max_response_kb's default: the most
	// one response body may hold (4 MiB).
	DefaultMaxResponseKB = 4096
	// DefaultMaxRetries is model.max_retries's default: the retries of a
	// call answered with 429 or 5xx, or not answered at all.
	DefaultMaxRetries = 2
	// DefaultMaxRetryDelay is model.max_retry_delay's default: the
	// longest wait before a retry; a Retry-After longer than this ends the
	// retries.
	DefaultMaxRetryDelay = 60 * time.Second
	// DefaultTimeout is model.timeout's default: one call, retries
	// included.
	DefaultTimeout = 300 * time.Second
	// DefaultMaxToolRounds is model.max_tool_rounds's default: the rounds
	// of tool calls the agent loop (hermes chat) runs in one turn before
	// it stops and says so.
	DefaultMaxToolRounds = 20
)

// Bounds of the model: values; past them a value is a mistake.
const (
	maxRetriesLimit    = 10
	maxResponseKBLimit = 1 << 20 // 1 GiB
)

// Settings are the model: block of config.yaml, defaults applied, and the
// API key it names.
type Settings struct {
	// Path is the config file the settings came from, for errors.
	Path string
	// BaseURL is model.base_url.
	BaseURL string
	// Default is model.default: the model used when none is named.
	Default string
	// APIKeyEnv is model.api_key_env; APIKey its value ("" when unset,
	// for endpoints that need none). The key is never logged or printed.
	APIKeyEnv string
	APIKey    string `json:"-"`
	// KeyFrom says where the key was found: "environment", ".env" or "".
	KeyFrom string
	// MaxResponseBytes bounds one response body (model.max_response_kb).
	MaxResponseBytes int64
	// MaxRetries and MaxRetryDelay bound retries (model.max_retries,
	// model.max_retry_delay).
	MaxRetries    int
	MaxRetryDelay time.Duration
	// Timeout bounds one call, retries included (model.timeout).
	Timeout time.Duration
	// MaxToolRounds bounds the rounds of tool calls of one chat turn
	// (model.max_tool_rounds).
	MaxToolRounds int
}

// Load applies block, the model: block of the config file path (both as
// host/config reads them, ${VAR}s expanded; nil gives the defaults), and
// finds the API key it names: in lookupEnv first (the run's environment),
// then in what dotenv returns ($HERMES_HOME/.env, read only then; nil is
// none). A value of the wrong type is an error naming the file and key.
func Load(block map[string]any, path string, lookupEnv func(string) (string, bool), dotenv func() (map[string]string, error)) (*Settings, error) {
	s, err := Parse(block)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; fix the file", path, err)
	}
	s.Path = path
	if v, ok := lookupEnv(s.APIKeyEnv); ok && v != "" {
		s.APIKey, s.KeyFrom = v, "environment"
		return s, nil
	}
	if dotenv == nil {
		return s, nil
	}
	vars, err := dotenv()
	if err != nil {
		return nil, err
	}
	if v := vars[s.APIKeyEnv]; v != "" {
		s.APIKey, s.KeyFrom = v, ".env"
	}
	return s, nil
}

// Config returns what the model plugin is opened with: the endpoint, the
// key and the bounds of a call.
func (s *Settings) Config() sdkmodel.Config {
	return sdkmodel.Config{
		BaseURL: s.BaseURL, Default: s.Default, APIKey: s.APIKey,
		MaxResponseBytes: s.MaxResponseBytes, MaxRetries: s.MaxRetries, MaxRetryDelay: s.MaxRetryDelay, Timeout: s.Timeout,
	}
}

// FromConfig returns the settings a model plugin was opened with (the
// plugin's side of Config); the fields only the host uses stay zero.
func FromConfig(c sdkmodel.Config) *Settings {
	return &Settings{
		BaseURL: c.BaseURL, Default: c.Default, APIKey: c.APIKey,
		MaxResponseBytes: c.MaxResponseBytes, MaxRetries: c.MaxRetries, MaxRetryDelay: c.MaxRetryDelay, Timeout: c.Timeout,
	}
}

// Parse reads a model: block (as host/config reads it); nil gives the
// defaults. The API key is Load's to find.
func Parse(block map[string]any) (*Settings, error) {
	s := &Settings{
		BaseURL:          DefaultBaseURL,
		APIKeyEnv:        DefaultAPIKeyEnv,
		MaxResponseBytes: DefaultMaxResponseKB << 10,
		MaxRetries:       DefaultMaxRetries,
		MaxRetryDelay:    DefaultMaxRetryDelay,
		Timeout:          DefaultTimeout,
		MaxToolRounds:    DefaultMaxToolRounds,
	}
	for k, v := range block {
		key := Key + "." + k
		switch k {
		case "base_url":
			str, err := stringValue(key, v)
			if err != nil {
				return nil, err
			}
			if str != "" {
				if !strings.HasPrefix(str, "http://") && !strings.HasPrefix(str, "https://") {
					return nil, fmt.Errorf("%s must be an http:// or https:// URL (for example https://api.openai.com/v1), got %q", key, str)
				}
				s.BaseURL = strings.TrimRight(str, "/")
			}
		case "default":
			str, err := stringValue(key, v)
			if err != nil {
				return nil, err
			}
			s.Default = str
		case "api_key_env":
			str, err := stringValue(key, v)
			if err != nil {
				return nil, err
			}
			if str != "" {
				s.APIKeyEnv = str
			}
		case "max_response_kb":
			n, err := Number(key, v, 1, maxResponseKBLimit)
			if err != nil {
				return nil, err
			}
			s.MaxResponseBytes = int64(n) << 10
		case "max_retries":
			n, err := Number(key, v, 0, maxRetriesLimit)
			if err != nil {
				return nil, err
			}
			s.MaxRetries = int(n)
		case "max_retry_delay":
			n, err := Number(key, v, 1, 3600)
			if err != nil {
				return nil, err
			}
			s.MaxRetryDelay = time.Duration(n * float64(time.Second))
		case "timeout":
			n, err := Number(key, v, 1, 86400)
			if err != nil {
				return nil, err
			}
			s.Timeout = time.Duration(n * float64(time.Second))
		case "max_tool_rounds":
			n, err := Number(key, v, 1, 1000)
			if err != nil {
				return nil, err
			}
			s.MaxToolRounds = int(n)
		}
	}
	return s, nil
}

func stringValue(key string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(x), nil
	default:
		return "", fmt.Errorf("%s must be a string, got %T", key, v)
	}
}

// Number reads a numeric config value (a number or a numeric string)
// between lo and hi; the error names key.
func Number(key string, v any, lo, hi float64) (float64, error) {
	f, ok := fields.Number(v)
	if !ok {
		if s, isText := v.(string); isText {
			return 0, fmt.Errorf("%s must be a number, got %q", key, s)
		}
		return 0, fmt.Errorf("%s must be a number, got %T", key, v)
	}
	if f < lo || f > hi {
		return 0, fmt.Errorf("%s must be between %g and %g, got %v", key, lo, hi, v)
	}
	return f, nil
}
