package transport

import "time"

// DefaultMaxMessageBytes is the host's default of Config.MaxMessageBytes
// (max_message_mb: 64), for a transport whose host sent none.
const DefaultMaxMessageBytes = 64 << 20

// Config is everything a transport plugin learns about the server it
// connects to. The host has already interpolated ${VAR}s and computed the
// environment; a plugin uses these values as they are. The zero value is
// safe: TLS certificates are verified unless InsecureSkipVerify is set.
type Config struct {
	// Server is the name of the server entry in config.yaml.
	Server string `json:"server"`
	// Transport is the transport name: "stdio", "http", "sse" or a
	// third-party name.
	Transport string `json:"transport"`

	// Command, Args, Env and Cwd start a local server. Env is the complete
	// environment of the child (KEY=value), nothing else is inherited.
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	Env     []string `json:"env,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	// Sandbox, when set, is the isolation the server process must run
	// under (see Sandbox); nil runs it with the environment above only.
	Sandbox *Sandbox `json:"sandbox,omitempty"`
	// StderrLog is the file a local server's stderr is appended to.
	StderrLog string `json:"stderr_log,omitempty"`

	// URL and Headers reach a remote server. DynamicHeaders says the plugin
	// must ask the host for extra headers before each request
	// (Host.Headers), because an auth plugin supplies them.
	URL            string            `json:"url,omitempty"`
	Headers        map[string]string `json:"headers,omitempty"`
	DynamicHeaders bool              `json:"dynamic_headers,omitempty"`

	// TLS settings of a remote server. InsecureSkipVerify turns certificate
	// verification off; it is false unless the user set ssl_verify: false.
	InsecureSkipVerify bool   `json:"insecure_skip_verify,omitempty"`
	CABundle           string `json:"ca_bundle,omitempty"`
	ClientCert         string `json:"client_cert,omitempty"`
	ClientKey          string `json:"client_key,omitempty"`

	// ConnectTimeout bounds connecting (Open, and the handshake the host
	// runs afterwards); Timeout bounds one request. The host sends its
	// configured values; zero means no bound of the plugin's own (the host
	// still bounds every call).
	ConnectTimeout time.Duration `json:"connect_timeout,omitempty"`
	Timeout        time.Duration `json:"timeout,omitempty"`

	// MaxMessageBytes is the largest message the host accepts from this
	// server; a plugin may refuse larger ones early.
	MaxMessageBytes uint64 `json:"max_message_bytes,omitempty"`
	// MaxServerRequests is how many requests of the server's own
	// (sampling, elicitation, roots) the host handles at once; it refuses
	// more. A plugin that reads them from a stream may hold the stream
	// back rather than hand over many more than that.
	MaxServerRequests int `json:"max_server_requests,omitempty"`
	// LogLinesPerSecond and LogBurst bound the lines of a local server's
	// stderr written to StderrLog (a token bucket: LogBurst at once, then
	// LogLinesPerSecond); zero means logfile.DefaultRate and DefaultBurst.
	// The host sets them from log_lines_per_second and log_burst.
	LogLinesPerSecond int `json:"log_lines_per_second,omitempty"`
	LogBurst          int `json:"log_burst,omitempty"`

	// Extra holds keys of the server entry the host does not know, for
	// third-party transports.
	Extra map[string]any `json:"extra,omitempty"`
}
