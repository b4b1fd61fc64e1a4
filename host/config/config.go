package config

import (
	"errors"
	"fmt"
	"github.com/hermes-agent/hermes/host/homedir"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// File is the name of the config file inside the Hermes home folder.
const File = homedir.ConfigName

// ServersKey is the top-level key that holds the MCP server entries.
const ServersKey = "mcp_servers"

// Defaults of a server entry (SPEC §2).
const (
	DefaultTimeout        = 300 * time.Second
	DefaultConnectTimeout = 60 * time.Second
	// FirstConnectTimeout replaces DefaultConnectTimeout for a server's
	// first start (the probe of add and install, and a connection of a
	// server hermes has no record of), the slowest one: a package runner
	// fetches the package, caches are cold. An entry's own connect_timeout
	// always wins.
	FirstConnectTimeout      = 2 * time.Minute
	DefaultKeepaliveInterval = 180 * time.Second
	MinKeepaliveInterval     = 5 * time.Second
	DefaultOAuthClientName   = "Hermes Agent"
	DefaultOAuthTimeout      = 300 * time.Second
	// DefaultMaxMessageMB bounds one message from a server (max_message_mb).
	DefaultMaxMessageMB = 64
	// DefaultMaxResultKB bounds the text of one tool result handed to the
	// model (max_result_kb); a larger result goes to a file in the cache
	// folder and the model gets a reference to it.
	DefaultMaxResultKB = 512
	// ProtocolAuto is the protocol key's default: speak the newest
	// revision both sides support.
	ProtocolAuto = "auto"
	// DefaultMaxServerRequests bounds the requests of a server's own
	// (sampling, elicitation, roots) handled at once (max_server_requests).
	DefaultMaxServerRequests = 64
)

// ProtocolRevisions are the MCP revisions hermes speaks, newest first: the
// values the protocol key may pin. 2026-07-28 is the stateless revision
// (server/discover, per-request metadata); the others use the initialize
// handshake, and a server answering initialize picks among them.
var ProtocolRevisions = []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

var serverNameRE = lazyregexp.New(`^[A-Za-z0-9_-]+$`)

// ValidName reports whether name may be used as a server name.
func ValidName(name string) bool { return serverNameRE.MatchString(name) }

// Home returns the Hermes home folder: $HERMES_HOME, else ~/.hermes.
func Home() string { return HomeFrom(os.Getenv) }

// HomeFrom is Home with the environment read through getenv.
func HomeFrom(getenv func(string) string) string {
	return string(homedir.From(getenv))
}

// SafeMode reports whether HERMES_SAFE_MODE asks to load no MCP servers.
func SafeMode() bool { return SafeModeFrom(os.Getenv) }

// getenvOf turns an environment lookup into a getenv; nil is the
// process's environment.
func getenvOf(env func(string) (string, bool)) func(string) string {
	if env == nil {
		return os.Getenv
	}
	return func(k string) string { v, _ := env(k); return v }
}

// SafeModeFrom is SafeMode with the environment read through getenv.
func SafeModeFrom(getenv func(string) string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv("HERMES_SAFE_MODE"))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

// Config is the mcp_servers section of config.yaml after interpolation,
// validation and defaults.
type Config struct {
	// Path is the config file that was read.
	Path string
	// SafeMode is true when HERMES_SAFE_MODE is set; Servers is then empty.
	SafeMode bool
	// Servers in the order they appear in the file, including invalid ones
	// (with Err set).
	Servers []*Server
}

// Server returns the server called name, or nil.
func (c *Config) Server(name string) *Server {
	if c == nil {
		return nil
	}
	for _, s := range c.Servers {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Names returns the server names in file order.
func (c *Config) Names() []string {
	if c == nil {
		return nil
	}
	out := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		out[i] = s.Name
	}
	return out
}

// ToolsFilter is the tools: block of a server entry.
type ToolsFilter struct {
	// Include and Exclude hold tool names or globs; include wins over exclude.
	Include, Exclude []string
	// Resources and Prompts enable the utility tools (default true).
	Resources, Prompts bool
	// OnChange is what happens to a tool whose definition drifted from
	// the one approved (on_change): OnChangeWarn (the default; reported)
	// or OnChangeDeny (also withheld from the model until accepted).
	OnChange string
}

// Values of tools.on_change.
const (
	OnChangeWarn = "warn"
	OnChangeDeny = "deny"
)

// OAuthSettings is the oauth: block of a server entry.
type OAuthSettings struct {
	ClientID, ClientSecret, Scope string
	// RedirectPort is the loopback callback port; 0 picks a free one.
	RedirectPort int
	ClientName   string
	Timeout      time.Duration
	// ExtraParams are added to the authorization URL.
	ExtraParams map[string]string
	// ClientMetadataURL is the URL of the client's metadata document, its
	// client_id where the authorization server accepts such documents.
	ClientMetadataURL string
	// GrantType is authorization_code (a user logs in; the default),
	// client_credentials (the configured client is the identity),
	// jwt_bearer (a workload's platform-issued JWT) or id_jag (a person's
	// ID token exchanged at the enterprise IdP); see OAuthGrant.
	GrantType string
	OAuthGrant
	// DPoP is oauth.dpop: DPoPAuto, "true" or "false", "" when absent
	// (auto): whether tokens are bound to a key of hermes's (RFC 9449).
	DPoP string
}

// DPoPAuto is oauth.dpop's default: DPoP where the authorization server
// offers it and the resource asks for it.
const DPoPAuto = "auto"

// Server is one entry of mcp_servers with defaults applied.
type Server struct {
	Name      string
	Command   string
	Args      []string
	Env       map[string]string
	Cwd       string
	URL       string
	Headers   map[string]string
	Transport string // "stdio", "http", "sse" or a third-party plugin name
	// Catalog is the catalog entry this server was installed from
	// (catalog:, written by hermes mcp install); empty for a server the
	// user added. Only such a server is the catalog's to uninstall.
	Catalog string
	// Origin is where the entry was declared: config.yaml (zero) or a
	// project file (see Origin).
	Origin Origin

	Timeout           time.Duration
	ConnectTimeout    time.Duration
	KeepaliveInterval time.Duration
	// MaxMessageBytes is the largest message accepted from the server
	// (max_message_mb).
	MaxMessageBytes uint64
	// MaxResultBytes is the largest tool result handed to the model as
	// text (max_result_kb); a larger one is saved to a file.
	MaxResultBytes int
	// MaxServerRequests bounds the server's own requests handled at once
	// (max_server_requests); more are refused.
	MaxServerRequests int
	// LogLinesPerSecond and LogBurst bound the server's log lines, on its
	// stderr and as notifications/message, each on its own
	// (log_lines_per_second, log_burst); the lines over are dropped and
	// counted.
	LogLinesPerSecond int
	LogBurst          int
	// Protocol is the MCP revision to speak: ProtocolAuto (negotiate) or
	// one of ProtocolRevisions (pinned).
	Protocol string

	// Start is start: StartLazy, StartEager, or "" when not set (lazy
	// where the server's record of what it offered is fresh).
	Start string
	// IdleTimeout is idle_timeout: 0 when not set (see IdleAfter),
	// NeverIdle for 0.
	IdleTimeout time.Duration
	// Prestart (prestart: true) starts a lazy server in the background at
	// session start.
	Prestart bool

	Enabled                   bool
	SupportsParallelToolCalls bool
	// NoInstructions (instructions: false) keeps the server's
	// instructions from initialize out of hermes chat's system message.
	NoInstructions bool
	Tools          ToolsFilter

	Auth  string // lower-cased; "" for none
	OAuth OAuthSettings

	SSLVerify  bool
	CABundle   string // set when ssl_verify is a path
	ClientCert string
	ClientKey  string

	// Sampling and Elicitation are kept raw (interpolated).
	Sampling, Elicitation map[string]any
	// NoRoots (roots: false) keeps the host's roots from this server: it
	// is not offered the roots capability, so a server that would replace
	// the folders of its own command line with the client's roots
	// (server-filesystem) keeps them.
	NoRoots bool
	// Isolation is how `hermes mcp gateway` shares the server among
	// people (isolation:): IsolationShared, or "" when not set (one
	// process for everyone), or IsolationPerUser (one sandboxed process
	// per person; see PerUser).
	Isolation string
	// Sandbox is the isolation of a stdio server (sandbox:); nil for none.
	Sandbox *SandboxSettings
	// Plugin pins the plugin binary a catalog entry shipped (plugin:); nil
	// for the plugins found on the search path.
	Plugin *PluginPin

	// Raw is the entry as written in the file, before interpolation and
	// defaults (nil when the entry is empty).
	Raw map[string]any
	// Extra holds the unknown top-level keys with ${VAR}s resolved, for a
	// third-party transport plugin (keys listed in Unknown).
	Extra map[string]any
	// Unknown lists keys this version does not know, sorted; nested ones as
	// "oauth.key" or "tools.key". They stay in the file.
	Unknown []string
	// Warnings are problems that do not stop the server (e.g. both url and
	// command set).
	Warnings []string
	// NeedsVars lists the ${VAR} names that could not be resolved.
	NeedsVars []string
	// Err is set when the entry cannot be used; other servers are unaffected.
	Err error
}

// ParseError is a config file that is not valid YAML.
type ParseError struct {
	Path         string
	Line, Column int
	Msg          string
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %s; fix the file and try again", e.Path, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s; fix the file and try again", e.Path, e.Msg)
}

// parseFile parses src with comments, turning goccy errors into *ParseError.
func parseFile(path string, src []byte) (*ast.File, error) {
	f, err := parser.ParseBytes(src, parser.ParseComments)
	if err != nil {
		return nil, toParseError(path, err)
	}
	if _, err := checkAliases(f); err != nil {
		return nil, &ParseError{Path: path, Msg: fmt.Sprintf("its YAML aliases (*name) expand to more than %d values, the limit for a config file; write the values out instead of nesting aliases", MaxAliasNodes)}
	}
	return f, nil
}

func toParseError(path string, err error) error {
	pe := &ParseError{Path: path, Msg: err.Error()}
	var ye yaml.Error
	if errors.As(err, &ye) {
		pe.Msg = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			pe.Line, pe.Column = tk.Position.Line, tk.Position.Column
		}
	}
	pe.Msg = strings.ReplaceAll(pe.Msg, "\n", " ")
	return pe
}

// Load reads <home>/config.yaml and <home>/.env. A missing config file is an
// empty config. Errors in one server entry are reported on that Server (Err)
// and do not fail the load; a file that does not parse, or an mcp_servers
// value that is not a mapping, does.
func Load(home string) (*Config, error) { return LoadEnv(home, nil) }

// LoadEnv is Load with the host's environment (HERMES_SAFE_MODE, and the
// first place a ${VAR} is looked up) read through env, for a caller that
// runs with an environment of its own (cli.Options.Env); nil is the
// process's (os.LookupEnv).
func LoadEnv(home string, env func(string) (string, bool)) (*Config, error) {
	return LoadFileEnv(homedir.Dir(home).Config(), home, env)
}

// LoadFileEnv is LoadEnv of the config file at path instead of
// <home>/config.yaml (`hermes mcp gateway --config FILE`: a file mounted
// from a ConfigMap); ${VAR}s are still looked up in env, then
// <home>/.env.
func LoadFileEnv(path, home string, env func(string) (string, bool)) (*Config, error) {
	cfg := &Config{Path: path}
	if SafeModeFrom(getenvOf(env)) {
		cfg.SafeMode = true
		return cfg, nil
	}
	src, err := readLimited(path, MaxConfigBytes, false)
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if refusedFile(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	servers, err := decodeServers(path, src)
	if err != nil {
		return nil, err
	}
	if len(servers) == 0 {
		return cfg, nil
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	lookup := varLookupEnv(env, dotenv)
	envPath := homedir.Dir(home).DotEnv()
	for _, it := range servers {
		cfg.Servers = append(cfg.Servers, buildServer(keyString(it.Key), it.Value, lookup, envPath, env))
	}
	return cfg, nil
}

// LoadEntry returns the Server that Load would return for entry once it is
// saved as server name (Document.SetServer) in <home>/config.yaml, without
// writing anything: the entry is emitted as the file would hold it and read
// back with Load's defaults, validation and ${VAR} interpolation. The rest
// of config.yaml plays no part, and HERMES_SAFE_MODE is the caller's to
// check (SafeMode).
//
// pending holds .env values that are to be saved together with the entry,
// such as a secret the user has just typed. ${VAR} is looked up in the
// process environment, then in pending, then in <home>/.env: the order Load
// follows once pending is saved to .env. pending is used for this entry only;
// nothing is written to .env and nothing is set in the process environment.
func LoadEntry(home, name string, entry *ServerEntry, pending map[string]string) (*Server, error) {
	return LoadEntryEnv(home, name, entry, pending, nil)
}

// LoadEntryEnv is LoadEntry with the host's environment read through env
// (nil is the process's), as LoadEnv. The entry's keys named in ignore are
// left out before it is read and listed in its Origin.Ignored, as
// ServersFrom does.
func LoadEntryEnv(home, name string, entry *ServerEntry, pending map[string]string, env func(string) (string, bool), ignore ...string) (*Server, error) {
	if !ValidName(name) {
		return nil, fmt.Errorf("server name %q may only contain letters, digits, \"_\" and \"-\"; choose another name", name)
	}
	var fields Map
	if entry != nil {
		fields = entry.Fields
	}
	var b strings.Builder
	emitKV(&b, 0, ServersKey, Map{{name, fields}})
	path := homedir.Dir(home).Config()
	servers, err := decodeServers(path, []byte(b.String()))
	if err != nil {
		return nil, err
	}
	if len(servers) != 1 || keyString(servers[0].Key) != name {
		return nil, fmt.Errorf("server %q: the entry does not read back as one server; this is a bug in hermes", name)
	}
	dotenv, err := LoadDotEnv(home)
	if err != nil {
		return nil, err
	}
	value, dropped := dropKeys(servers[0].Value, ignore)
	s := buildServer(name, value, varLookupEnv(env, pending, dotenv), homedir.Dir(home).DotEnv(), env)
	s.Origin.Ignored = dropped
	return s, nil
}

// varLookupEnv resolves a ${VAR} name from the host's environment, read
// through env (nil is the process's), then from each of layers in turn;
// the first that holds the name wins.
func varLookupEnv(env func(string) (string, bool), layers ...map[string]string) func(string) (string, bool) {
	if env == nil {
		env = os.LookupEnv
	}
	return func(name string) (string, bool) {
		if v, ok := env(name); ok {
			return v, true
		}
		for _, l := range layers {
			if v, ok := l[name]; ok {
				return v, true
			}
		}
		return "", false
	}
}

// decodeServers returns the mcp_servers entries of src in file order.
func decodeServers(path string, src []byte) (yaml.MapSlice, error) {
	return decodeTopMapping(path, src, ServersKey, "a mapping of server names to settings")
}

// decodeTopMapping returns the mapping under the top-level key of the
// config file src, nil when the key is absent or empty; what names what
// the mapping should hold, for the error.
func decodeTopMapping(path string, src []byte, key, what string) (yaml.MapSlice, error) {
	value, err := decodeTopValue(path, src, key)
	if err != nil {
		return nil, err
	}
	switch v := value.(type) {
	case nil:
		return nil, nil
	case yaml.MapSlice:
		return v, nil
	default:
		return nil, fmt.Errorf("%s: %s must be %s, got %s; fix the file", path, key, what, typeName(v))
	}
}

// decodeTopValue returns the value under the top-level key of the config
// file src (mappings ordered), nil when the key or the file's body is
// absent.
func decodeTopValue(path string, src []byte, key string) (any, error) {
	f, err := parseFile(path, src)
	if err != nil {
		return nil, err
	}
	if len(f.Docs) == 0 || f.Docs[0].Body == nil {
		return nil, nil
	}
	var root any
	if err := yaml.NodeToValue(f.Docs[0].Body, &root, yaml.UseOrderedMap()); err != nil {
		return nil, toParseError(path, err)
	}
	top, ok := root.(yaml.MapSlice)
	if !ok {
		if root == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: the top level must be a mapping of keys, got %s; fix the file", path, typeName(root))
	}
	for _, it := range top {
		if keyString(it.Key) == key {
			return it.Value, nil
		}
	}
	return nil, nil
}

func keyString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return fmt.Sprint(k)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case yaml.MapSlice, map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case int, int64, uint64, uint, float64, float32:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// plain converts decoded YAML (with ordered maps) into map[string]any /
// []any / scalars.
func plain(v any) any {
	switch t := v.(type) {
	case yaml.MapSlice:
		m := make(map[string]any, len(t))
		for _, it := range t {
			m[keyString(it.Key)] = plain(it.Value)
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = plain(x)
		}
		return out
	}
	return v
}

// interpolateValue applies Interpolate to every string value (not keys) of
// decoded YAML, collecting unresolved names in file order.
func interpolateValue(v any, lookup func(string) (string, bool), missing *[]string) any {
	switch t := v.(type) {
	case string:
		s, miss := Interpolate(t, lookup)
		for _, m := range miss {
			if !slices.Contains(*missing, m) {
				*missing = append(*missing, m)
			}
		}
		return s
	case yaml.MapSlice:
		m := make(yaml.MapSlice, len(t))
		for i, it := range t {
			m[i] = yaml.MapItem{Key: it.Key, Value: interpolateValue(it.Value, lookup, missing)}
		}
		return m
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = interpolateValue(x, lookup, missing)
		}
		return out
	}
	return v
}
