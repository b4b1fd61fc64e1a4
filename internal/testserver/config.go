package testserver

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// EnvFlags names the environment variable holding extra flags, separated by
// spaces (single or double quotes group words). They are parsed before the
// command-line arguments, so the command line wins.
const EnvFlags = "HERMES_TESTSERVER_FLAGS"

// Config is the parsed command line of the hermes-testserver binary.
type Config struct {
	// Server configures the MCP server itself.
	Server Options

	// HTTPAddr serves streamable HTTP at /mcp (--http).
	HTTPAddr string
	// SSEAddr serves the legacy SSE transport at /sse and /message (--sse).
	SSEAddr string
	// TLSCert and TLSKey switch HTTP to HTTPS (--tls-cert, --tls-key).
	TLSCert, TLSKey string
	// ClientCA requires client certificates signed by this CA (--client-ca).
	ClientCA string
	// Protocols restricts the server, over stdio and --http, to these MCP
	// protocol revisions, newest first (--protocols); nil serves every
	// revision mcp-go knows. See ParseProtocols and the package
	// documentation.
	Protocols []string
	// Discover is how a server without 2026-07-28 answers server/discover
	// (--discover): "" Method not found, DiscoverIgnore not at all (stdio),
	// DiscoverNullID an error whose id is null (HTTP status 400), as a
	// stateful TypeScript SDK server refuses any request before initialize.
	Discover string
	// PingError answers every ping with JSON-RPC error -32000 and this
	// message (--ping-error; stdio, with --protocols): a server without
	// ping that does not say -32601.
	PingError string

	// HangInitialize never answers initialize (--hang-initialize).
	HangInitialize bool
	// Garbage writes non-JSON output and never answers (--garbage).
	Garbage bool
	// Banner writes one non-JSON line to stdout, then serves (--banner).
	Banner bool
	// StderrNoise writes lines to stderr continuously (--stderr-noise).
	StderrNoise bool
	// Linger keeps a stdio server running after its stdin closes
	// (--linger), as a server that ignores the end of its input.
	Linger bool
	// IgnoreSIGTERM ignores SIGTERM (--ignore-sigterm); only SIGKILL stops it.
	IgnoreSIGTERM bool
	// FailStart, when set, is printed to stderr and the process exits 1
	// (--fail-start).
	FailStart string
	// SlowStart delays serving (--slow-start MS).
	SlowStart time.Duration

	// StatusOnNth and StatusCode make the Nth and later POSTs fail with
	// that HTTP status (--status-on N:CODE).
	StatusOnNth, StatusCode int
	// HTMLRoot answers GET and HEAD on / and on /mcp with an HTML page
	// (--html-root).
	HTMLRoot bool
	// HTMLOnly answers every request with an HTML page (--html-only).
	HTMLOnly bool
	// RequireBearer demands Authorization: Bearer <token> (--require-bearer).
	RequireBearer string
	// PlainChallenge makes RequireBearer's 401 a plain "Bearer realm"
	// challenge naming no OAuth metadata, as an API-key server answers
	// (--plain-challenge).
	PlainChallenge bool
	// OAuthIssuer makes the server an OAuth 2.1 protected resource whose
	// tokens this authorization server issues (--oauth-issuer); see the
	// package documentation.
	OAuthIssuer string
	// OAuthScopes are the scopes every request's token needs, announced in
	// the 401 challenge (--oauth-scopes; default mcp:read).
	OAuthScopes []string
	// OAuthAdminScope is the scope the admin_echo tool needs on top
	// (--oauth-admin-scope; default mcp:admin).
	OAuthAdminScope string
	// OAuthDPoP takes only DPoP-bound tokens (RFC 9449), each with a valid
	// proof (--oauth-dpop); OAuthDPoPNonce also wants the server's nonce
	// in every proof (--oauth-dpop-nonce). See dpop.go.
	OAuthDPoP, OAuthDPoPNonce bool
	// oauth validates the tokens of OAuthIssuer, shared by the handlers.
	oauth *resourceServer
	// RedirectTo 307-redirects every request to this URL (--redirect-to).
	RedirectTo string
	// CutStream cuts the SSE response stream of slow_stream calls
	// (--cut-stream).
	CutStream bool
	// SessionTTL expires HTTP sessions this long after initialize
	// (--session-ttl MS).
	SessionTTL time.Duration
	// sessions is the expiring session manager of --session-ttl, shared by
	// the handler and the expire_sessions tool.
	sessions *expiringSessions

	// Hostile replaces the server with a hostile one (see Hostile).
	Hostile Hostile
	// Daemon leaves a setsid daemon behind at start, which writes its pid
	// to this file (--daemon PIDFILE).
	Daemon string
	// daemonFork and daemonRun are the two processes behind Daemon.
	daemonFork, daemonRun string
}

// HTTPFaults reports whether any HTTP-only fault is configured.
func (c *Config) HTTPFaults() bool {
	return c.StatusOnNth > 0 || c.HTMLRoot || c.HTMLOnly || c.RequireBearer != "" ||
		c.RedirectTo != "" || c.CutStream || c.SessionTTL > 0 || c.OAuthIssuer != ""
}

// ParseConfig parses the flags in envFlags (the value of EnvFlags) followed
// by args. Errors describe the offending flag; output receives usage text on
// error and may be nil.
func ParseConfig(args []string, envFlags string, output io.Writer) (*Config, error) {
	envArgs, err := SplitFlags(envFlags)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvFlags, err)
	}
	cfg := &Config{}
	fs := flag.NewFlagSet("hermes-testserver", flag.ContinueOnError)
	if output == nil {
		output = io.Discard
	}
	fs.SetOutput(output)

	var slowStart, exitAfterInit, sessionTTL, descRepeat, instrRepeat int
	var statusOn, protocols, oauthScopes string
	fs.StringVar(&cfg.Server.Name, "name", DefaultName, "server name reported in initialize")
	fs.IntVar(&cfg.Server.ExtraTools, "tools", 0, "add N extra tools tool_1..tool_N")
	fs.IntVar(&cfg.Server.PageSize, "page-size", 0, "list pagination limit")
	fs.BoolVar(&cfg.Server.NoToolsCapability, "no-tools-capability", false, "no tools and no tools capability")
	fs.BoolVar(&cfg.Server.Resources, "resources", false, "add static resources and a resource template")
	fs.BoolVar(&cfg.Server.Prompts, "prompts", false, "add two prompts with arguments")
	fs.BoolVar(&cfg.Server.EchoMeta, "echo-meta", false, "add the tool echo_meta (the params._meta of its call)")
	fs.IntVar(&exitAfterInit, "exit-after-init", 0, "exit `MS` milliseconds after initialize")
	fs.BoolVar(&cfg.Server.Trace, "trace", false, "write a stderr line for each ping, tools/list and sleep call started")
	fs.StringVar(&cfg.PingError, "ping-error", "", "stdio, with --protocols: answer ping with JSON-RPC error -32000 `MSG`")
	fs.StringVar(&cfg.Server.Version, "server-version", "", "server version reported in initialize")
	fs.StringVar(&cfg.Server.EchoDescription, "tool-desc", "", "description of echo (and of --extra-tool)")
	fs.IntVar(&descRepeat, "tool-desc-repeat", 0, "with --tool-desc: the description is it repeated `N` times (a huge one)")
	fs.StringVar(&cfg.Server.Instructions, "instructions", "", "the instructions sent in initialize (default: a line naming the test server)")
	fs.IntVar(&instrRepeat, "instructions-repeat", 0, "with --instructions: they are repeated `N` times (a huge text)")
	fs.StringVar(&cfg.Server.EchoExtraArg, "echo-extra-arg", "", "add a string property `NAME` to echo's input schema")
	fs.BoolVar(&cfg.Server.EchoReadOnly, "echo-read-only", false, "annotate echo readOnlyHint: true")
	fs.BoolVar(&cfg.Server.ReadOnlyTools, "read-only-tools", false, "annotate every tool readOnlyHint: true")
	fs.StringVar(&cfg.Server.ExtraToolName, "extra-tool", "", "add a tool `NAME` that answers with its own name")
	fs.BoolVar(&cfg.Server.DupTools, "dup-tools", false, "tools/list lists every tool twice")
	fs.BoolVar(&cfg.Server.EmptyToolName, "empty-tool-name", false, "tools/list also lists a tool without a name")

	fs.StringVar(&cfg.HTTPAddr, "http", "", "serve streamable HTTP at `ADDR`/mcp")
	fs.StringVar(&cfg.SSEAddr, "sse", "", "serve legacy SSE at `ADDR` (/sse, /message)")
	fs.StringVar(&cfg.TLSCert, "tls-cert", "", "TLS certificate `file` (PEM)")
	fs.StringVar(&cfg.TLSKey, "tls-key", "", "TLS key `file` (PEM)")
	fs.StringVar(&cfg.ClientCA, "client-ca", "", "require client certificates signed by this CA `file`")
	fs.StringVar(&protocols, "protocols", "", "speak only these MCP protocol revisions, a comma-separated `LIST` of "+
		strings.Join(mcp.ValidProtocolVersions, ", ")+" (default: all). Without 2026-07-28, server/discover is "+
		"Method not found and requests declaring 2026-07-28 are refused; without an older revision, initialize is "+
		"refused (UNSUPPORTED_PROTOCOL_VERSION); initialize answers the revision asked if listed, else the newest "+
		"listed one. Stdio and --http; --sse ignores it")

	fs.StringVar(&cfg.Discover, "discover", "", "with --protocols without 2026-07-28: answer server/discover `MODE`: "+
		DiscoverIgnore+" (never; stdio), "+DiscoverNullID+" (an error whose id is null, HTTP 400), or Method not found (default)")
	fs.BoolVar(&cfg.HangInitialize, "hang-initialize", false, "never answer initialize")
	fs.BoolVar(&cfg.Garbage, "garbage", false, "write non-JSON output and never answer")
	fs.BoolVar(&cfg.Banner, "banner", false, "stdio: write one non-JSON line to stdout, then serve")
	fs.BoolVar(&cfg.StderrNoise, "stderr-noise", false, "write lines to stderr continuously")
	fs.BoolVar(&cfg.Linger, "linger", false, "stdio: keep running after stdin closes")
	fs.BoolVar(&cfg.IgnoreSIGTERM, "ignore-sigterm", false, "ignore SIGTERM")
	fs.StringVar(&cfg.FailStart, "fail-start", "", "print `message` to stderr and exit 1")
	fs.IntVar(&slowStart, "slow-start", 0, "sleep `MS` milliseconds before serving")

	fs.StringVar(&statusOn, "status-on", "", "`N:CODE`: the Nth and later POSTs get HTTP status CODE")
	fs.BoolVar(&cfg.HTMLRoot, "html-root", false, "GET/HEAD on / and /mcp return an HTML page")
	fs.BoolVar(&cfg.HTMLOnly, "html-only", false, "every request gets an HTML page")
	fs.StringVar(&cfg.RequireBearer, "require-bearer", "", "require Authorization: Bearer `TOKEN`")
	fs.BoolVar(&cfg.PlainChallenge, "plain-challenge", false, "with --require-bearer: a plain Bearer challenge naming no OAuth metadata")
	fs.StringVar(&cfg.OAuthIssuer, "oauth-issuer", "", "be an OAuth protected resource of the authorization server `URL`: "+
		"serve RFC 9728 metadata, accept only its JWT access tokens for this server (401/403 challenges otherwise)")
	fs.StringVar(&oauthScopes, "oauth-scopes", "mcp:read", "with --oauth-issuer, the scopes every request needs (`LIST`, space or comma separated)")
	fs.StringVar(&cfg.OAuthAdminScope, "oauth-admin-scope", "mcp:admin", "with --oauth-issuer, the `SCOPE` the admin_echo tool needs too")
	fs.BoolVar(&cfg.OAuthDPoP, "oauth-dpop", false, "with --oauth-issuer, take DPoP-bound tokens only, each request with a valid DPoP proof (RFC 9449)")
	fs.BoolVar(&cfg.OAuthDPoPNonce, "oauth-dpop-nonce", false, "with --oauth-dpop, want the server's DPoP-Nonce in every proof")
	fs.StringVar(&cfg.RedirectTo, "redirect-to", "", "307-redirect every request to `URL`")
	fs.BoolVar(&cfg.CutStream, "cut-stream", false, "cut the SSE response stream of slow_stream calls")
	fs.IntVar(&sessionTTL, "session-ttl", 0, "HTTP sessions expire `MS` milliseconds after initialize")

	fs.Int64Var(&cfg.Hostile.HugeResult, "huge-result", 0, "hostile: answer the attack tool with a text result of `BYTES` bytes")
	fs.BoolVar(&cfg.Hostile.EndlessMessage, "endless-message", false, "hostile: answer the attack tool with a message that never ends")
	fs.BoolVar(&cfg.Hostile.EndlessEvent, "endless-event", false, "hostile (HTTP): answer the attack tool with an SSE event that never ends")
	fs.IntVar(&cfg.Hostile.RequestBurst, "request-burst", 0, "hostile: on the attack tool, send `N` sampling requests back to back")
	fs.BoolVar(&cfg.Hostile.HangList, "hang-list", false, "hostile: never answer tools/list, resources/list or prompts/list")
	fs.IntVar(&cfg.Hostile.DeepSchema, "deep-schema", 0, "hostile: list a tool whose input schema nests `N` levels deep")
	fs.IntVar(&cfg.Hostile.LogFlood, "log-flood", 0, "hostile (stdio): on the attack tool, send `N` log notifications back to back")
	fs.BoolVar(&cfg.Hostile.ShellNames, "shell-names", false, "hostile: also list tools whose names are shell code (ShellToolNames)")
	fs.StringVar(&cfg.Daemon, "daemon", "", "leave a setsid daemon behind at start; it writes its pid to `PIDFILE`")
	fs.StringVar(&cfg.daemonFork, "daemon-fork", "", "internal: the daemon's short-lived parent")
	fs.StringVar(&cfg.daemonRun, "daemon-run", "", "internal: the daemon")

	all := append(envArgs, args...)
	if err := fs.Parse(all); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if descRepeat < 0 || descRepeat > 0 && cfg.Server.EchoDescription == "" {
		return nil, errors.New("--tool-desc-repeat needs --tool-desc and a count of at least 1")
	}
	if descRepeat > 0 {
		cfg.Server.EchoDescription = strings.Repeat(cfg.Server.EchoDescription, descRepeat)
	}
	if instrRepeat < 0 || instrRepeat > 0 && cfg.Server.Instructions == "" {
		return nil, errors.New("--instructions-repeat needs --instructions and a count of at least 1")
	}
	if instrRepeat > 0 {
		cfg.Server.Instructions = strings.Repeat(cfg.Server.Instructions, instrRepeat)
	}
	cfg.SlowStart = time.Duration(slowStart) * time.Millisecond
	cfg.Server.ExitAfterInit = time.Duration(exitAfterInit) * time.Millisecond
	cfg.SessionTTL = time.Duration(sessionTTL) * time.Millisecond
	if statusOn != "" {
		n, code, ok := strings.Cut(statusOn, ":")
		cfg.StatusOnNth, err = strconv.Atoi(n)
		if err == nil && ok {
			cfg.StatusCode, err = strconv.Atoi(code)
		}
		if !ok || err != nil || cfg.StatusOnNth < 1 || cfg.StatusCode < 100 || cfg.StatusCode > 599 {
			return nil, fmt.Errorf("--status-on %q: want N:CODE with N >= 1 and an HTTP status code", statusOn)
		}
	}
	cfg.OAuthScopes = strings.Fields(strings.ReplaceAll(oauthScopes, ",", " "))
	if cfg.OAuthIssuer != "" {
		if u, err := url.Parse(cfg.OAuthIssuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--oauth-issuer %q: want an http(s) URL", cfg.OAuthIssuer)
		}
		if cfg.RequireBearer != "" {
			return nil, errors.New("--oauth-issuer and --require-bearer are mutually exclusive")
		}
		cfg.Server.AdminTool = true
	}
	if cfg.OAuthDPoP && cfg.OAuthIssuer == "" {
		return nil, errors.New("--oauth-dpop needs --oauth-issuer")
	}
	if cfg.OAuthDPoPNonce && !cfg.OAuthDPoP {
		return nil, errors.New("--oauth-dpop-nonce needs --oauth-dpop")
	}
	if cfg.HTTPAddr != "" && cfg.SSEAddr != "" {
		return nil, errors.New("--http and --sse are mutually exclusive")
	}
	if cfg.Protocols, err = ParseProtocols(protocols); err != nil {
		return nil, err
	}
	if cfg.Protocols != nil && cfg.SSEAddr != "" && !slices.ContainsFunc(cfg.Protocols, func(v string) bool { return !mcp.IsModernProtocol(v) }) {
		return nil, fmt.Errorf("--protocols %s cannot be served over --sse: the SSE transport speaks only revisions before %s; use --http or stdio",
			strings.Join(cfg.Protocols, ","), mcp.ProtocolVersion20260728)
	}
	if (cfg.TLSCert == "") != (cfg.TLSKey == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if cfg.ClientCA != "" && cfg.TLSCert == "" {
		return nil, errors.New("--client-ca needs --tls-cert and --tls-key")
	}
	if n := countTrue(cfg.Hostile.HugeResult > 0, cfg.Hostile.EndlessMessage, cfg.Hostile.EndlessEvent, cfg.Hostile.RequestBurst > 0,
		cfg.Hostile.HangList, cfg.Hostile.DeepSchema > 0, cfg.Hostile.LogFlood > 0); n > 1 {
		return nil, errors.New("--huge-result, --endless-message, --endless-event, --request-burst, --hang-list, --deep-schema and --log-flood are one attack each; pick one")
	}
	if cfg.Hostile.ShellNames && cfg.HTTPAddr != "" {
		return nil, errors.New("--shell-names speaks stdio only")
	}
	if cfg.Hostile.HugeResult < 0 || cfg.Hostile.RequestBurst < 0 || cfg.Hostile.DeepSchema < 0 || cfg.Hostile.LogFlood < 0 {
		return nil, errors.New("--huge-result, --request-burst, --deep-schema and --log-flood take a positive number")
	}
	if cfg.Hostile.Active() && cfg.Protocols != nil {
		return nil, errors.New("--protocols does not apply to a hostile server (--huge-result, --endless-message, --endless-event, --request-burst, --hang-list, --deep-schema, --log-flood)")
	}
	if cfg.Hostile.LogFlood > 0 && cfg.HTTPAddr != "" {
		return nil, errors.New("--log-flood speaks stdio only")
	}
	if cfg.Hostile.EndlessEvent && cfg.HTTPAddr == "" {
		return nil, errors.New("--endless-event needs --http")
	}
	if cfg.Hostile.Active() && (cfg.SSEAddr != "" || cfg.HTTPFaults() || cfg.Garbage || cfg.HangInitialize) {
		return nil, errors.New("a hostile server (--huge-result, --endless-message, --endless-event, --request-burst, --hang-list, --deep-schema, --log-flood) speaks stdio or --http, without other faults")
	}
	if cfg.HTTPAddr == "" && cfg.HTTPFaults() {
		return nil, errors.New("HTTP faults need --http")
	}
	if cfg.TLSCert != "" && cfg.HTTPAddr == "" && cfg.SSEAddr == "" {
		return nil, errors.New("--tls-cert needs --http or --sse")
	}
	return cfg, nil
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// SplitFlags splits s at unquoted spaces, honouring single and double quotes
// (no escapes), the way EnvFlags is read.
func SplitFlags(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote = r
			inWord = true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out, nil
}
