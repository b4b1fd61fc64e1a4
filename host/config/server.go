package config

import (
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/hermes-agent/hermes/host/fields"
)

var knownKeys = map[string]bool{
	"command": true, "args": true, "env": true, "cwd": true, "url": true, "headers": true,
	"transport": true, "timeout": true, "connect_timeout": true, "keepalive_interval": true,
	"enabled": true, "supports_parallel_tool_calls": true, "tools": true, "auth": true,
	"oauth": true, "ssl_verify": true, "client_cert": true, "client_key": true,
	"sampling": true, "elicitation": true, "roots": true, "sandbox": true, "plugin": true, "max_message_mb": true,
	"max_result_kb": true, "max_server_requests": true, "protocol": true,
	"log_lines_per_second": true, "log_burst": true, "catalog": true,
	"start": true, "idle_timeout": true, "prestart": true, "instructions": true,
	"isolation": true,
	// type is the other MCP clients' name for transport (TypeTransport).
	"type": true,
}

var knownToolsKeys = map[string]bool{"include": true, "exclude": true, "resources": true, "prompts": true, "on_change": true}

var knownOAuthKeys = map[string]bool{
	"client_id": true, "client_secret": true, "scope": true, "redirect_port": true,
	"client_name": true, "timeout": true, "extra_params": true, "client_metadata_url": true, "grant_type": true,
	"dpop": true,
}

// decoder reads typed values out of one server entry. v is the interpolated
// value, raw the value as written (used in messages so that no value from
// .env or the environment ends up in an error).
type decoder struct {
	server string
	err    error
	// home is the folder a leading "~" stands for: the HOME of the run the
	// entry is read for; "" is the process's (os.UserHomeDir).
	home string
}

func (d *decoder) fail(key, format string, args ...any) {
	if d.err == nil && d.server == "" {
		d.err = fmt.Errorf("key %q: "+format, append([]any{key}, args...)...)
	} else if d.err == nil {
		d.err = fmt.Errorf("server %q: key %q: "+format, append([]any{d.server, key}, args...)...)
	}
}

func got(raw any) string {
	switch t := raw.(type) {
	case string:
		return strconv.Quote(t)
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	case nil:
		return "nothing"
	}
	return fmt.Sprint(raw)
}

// The typed readers below check types with host/fields, the one field
// decoder; their messages name the server, the key, the type wanted and
// the value as written (raw, before interpolation: no value from .env or
// the environment ends up in an error).

func (d *decoder) str(key string, v, raw any) string {
	s, err := fields.Text(key, v)
	if err != nil {
		d.fail(key, "want a string, got %s; write a single value", got(raw))
	}
	return s
}

func (d *decoder) megabytes(key string, v, raw any, def uint64) uint64 {
	mb, ok := d.positive(key, v, raw, "megabytes", 4095)
	if !ok {
		return def << 20
	}
	return uint64(mb * (1 << 20))
}

// seconds reads a positive number of seconds.
// A number is seconds (30, "2.5"); a duration string ("30s", "2m") is
// read as one.
func (d *decoder) seconds(key string, v, raw any, def time.Duration) time.Duration {
	if s, ok := v.(string); ok {
		if secs, ok := fields.Seconds(s); ok {
			v = secs
		}
	}
	f, ok := d.positive(key, v, raw, "seconds (30) or a duration (30s, 2m)", 1e9)
	if !ok {
		return def
	}
	return time.Duration(f * float64(time.Second))
}

// positive reads a positive number of units up to max; ok is false when the
// key is absent or invalid (then the error is recorded).
func (d *decoder) positive(key string, v, raw any, unit string, max float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	f, ok := fields.Number(v)
	if !ok {
		d.fail(key, "want a number of %s, got %s", unit, got(raw))
		return 0, false
	}
	if f <= 0 || f > max {
		d.fail(key, "want a positive number of %s, got %s", unit, got(raw))
		return 0, false
	}
	return f, true
}

// parseBoolish reads true/false, 1/0, yes/no, on/off (any case).
func parseBoolish(v any) (bool, bool) {
	switch t := v.(type) {
	case bool:
		return t, true
	case int:
		if t == 0 || t == 1 {
			return t == 1, true
		}
	case uint64:
		if t == 0 || t == 1 {
			return t == 1, true
		}
	case string:
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "true", "1", "yes", "on", "y":
			return true, true
		case "false", "0", "no", "off", "n":
			return false, true
		}
	}
	return false, false
}

func (d *decoder) boolish(key string, v, raw any, def bool) bool {
	if v == nil {
		return def
	}
	b, ok := parseBoolish(v)
	if !ok {
		d.fail(key, "want true or false, got %s", got(raw))
		return def
	}
	return b
}

// dpopMode reads oauth.dpop: auto, or a boolean (true, false and their
// spellings), as "auto", "true" or "false"; absent, "" (auto).
func (d *decoder) dpopMode(key string, v, raw any) string {
	if v == nil {
		return ""
	}
	if s, ok := v.(string); ok && strings.EqualFold(strings.TrimSpace(s), DPoPAuto) {
		return DPoPAuto
	}
	b, ok := parseBoolish(v)
	if !ok {
		d.fail(key, "want auto, true or false, got %s", got(raw))
		return DPoPAuto
	}
	return strconv.FormatBool(b)
}

func (d *decoder) int(key string, v, raw any) int {
	switch t := v.(type) {
	case nil:
		return 0
	case int:
		return t
	case uint64:
		if t <= math.MaxInt32 {
			return int(t)
		}
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			return n
		}
	}
	d.fail(key, "want a whole number, got %s", got(raw))
	return 0
}

// strList reads a list of scalars; a single string is a list of one.
func (d *decoder) strList(key string, v, raw any) []string {
	if _, ok := v.([]any); !ok && v != nil {
		if s, err := fields.Text(key, v); err == nil {
			return []string{s}
		}
		d.fail(key, "want a list of strings, got %s", got(raw))
		return nil
	}
	l, err := fields.TextList(key, v)
	if err != nil {
		d.fail(key, "want a list of strings, got an entry that is %s", err.Got)
		return nil
	}
	return l
}

func (d *decoder) strMap(key string, v, raw any) map[string]string {
	if _, err := fields.Mapping(key, v); err != nil {
		d.fail(key, "want a mapping of names to strings, got %s", got(raw))
		return nil
	}
	m, err := fields.TextMap(key, v)
	if err != nil {
		d.fail(key, "want a mapping of names to strings, but %q is %s", strings.TrimPrefix(err.Key, key+"."), err.Got)
		return nil
	}
	return m
}

func (d *decoder) rawMap(key string, v, raw any) map[string]any {
	m, err := fields.Mapping(key, v)
	if err != nil {
		d.fail(key, "want a mapping, got %s", got(raw))
	}
	return m
}

func sub(m any, key string) any {
	if mm, ok := m.(map[string]any); ok {
		return mm[key]
	}
	return nil
}

// expandHome replaces a leading "~" or "~/" with the home folder of the
// run the entry is read for (d.home), or the process's when the run gives
// none.
func (d *decoder) expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	h := d.home
	if h == "" {
		var err error
		if h, err = os.UserHomeDir(); err != nil {
			return p
		}
	}
	return filepath.Join(h, p[1:])
}

// runHome is the HOME of env, a run's environment (nil: the process's); ""
// when it has none, and "~" then stands for the process's home.
func runHome(env func(string) (string, bool)) string {
	if env == nil {
		return ""
	}
	h, _ := env("HOME")
	return h
}

// splitArgs splits a command line written as one string, honouring single
// and double quotes and backslash escapes.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`, s[i+1]) >= 0 {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inWord = true
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// buildServer turns one decoded mcp_servers entry into a Server. lookup
// resolves its ${VAR}s; env is the run's environment (nil: the process's),
// whose HOME a leading "~" in its paths stands for.
func buildServer(name string, value any, lookup func(string) (string, bool), envPath string, env func(string) (string, bool)) *Server {
	s := &Server{
		Name:              name,
		Enabled:           true,
		Timeout:           DefaultTimeout,
		ConnectTimeout:    DefaultConnectTimeout,
		KeepaliveInterval: DefaultKeepaliveInterval,
		MaxMessageBytes:   DefaultMaxMessageMB << 20,
		MaxResultBytes:    DefaultMaxResultKB << 10,
		MaxServerRequests: DefaultMaxServerRequests,
		LogLinesPerSecond: DefaultLogLinesPerSecond,
		LogBurst:          DefaultLogBurst,
		Tools:             ToolsFilter{Resources: true, Prompts: true, OnChange: OnChangeWarn},
		SSLVerify:         true,
		OAuth:             OAuthSettings{ClientName: DefaultOAuthClientName, Timeout: DefaultOAuthTimeout},
	}
	d := &decoder{server: name, home: runHome(env)}
	if !ValidName(name) {
		d.err = fmt.Errorf("server %q: a name may only contain letters, digits, \"_\" and \"-\"; rename it", name)
	}
	if value != nil {
		if _, ok := value.(yaml.MapSlice); !ok {
			s.Err = fmt.Errorf("server %q: want a mapping of settings such as command or url, got %s; fix the entry", name, typeName(value))
			return s
		}
	}
	var missing []string
	iv := plain(interpolateValue(value, lookup, &missing))
	rv := plain(value)
	raw, _ := rv.(map[string]any)
	v, _ := iv.(map[string]any)
	s.Raw = raw

	for k, val := range v {
		if !knownKeys[k] {
			s.Unknown = append(s.Unknown, k)
			if s.Extra == nil {
				s.Extra = map[string]any{}
			}
			s.Extra[k] = val
		}
	}
	s.Command = d.expandHome(d.str("command", v["command"], raw["command"]))
	switch a := v["args"].(type) {
	case string:
		s.Args = splitArgs(a)
	default:
		s.Args = d.strList("args", a, raw["args"])
	}
	s.Env = d.strMap("env", v["env"], raw["env"])
	s.Cwd = d.expandHome(d.str("cwd", v["cwd"], raw["cwd"]))
	s.URL = strings.TrimSpace(d.str("url", v["url"], raw["url"]))
	s.Headers = d.strMap("headers", v["headers"], raw["headers"])
	// transport: and type: are read by the one rule, TransportName.
	s.Transport, _ = TransportName(d.str("transport", v["transport"], raw["transport"]))
	if t := strings.TrimSpace(d.str("type", v["type"], raw["type"])); t != "" {
		mapped, ok := TypeTransport(t)
		switch {
		case !ok:
			d.fail("type", "want stdio, http or sse (type is the other MCP clients' name for transport), got %s; name a transport plugin with transport: instead", got(raw["type"]))
		case s.Transport == "":
			s.Transport = mapped
		case s.Transport != mapped:
			s.Warnings = append(s.Warnings, fmt.Sprintf("server %q: transport %s and type %s disagree; using transport; remove type", name, s.Transport, t))
		}
	}
	s.Timeout = d.seconds("timeout", v["timeout"], raw["timeout"], DefaultTimeout)
	s.ConnectTimeout = d.seconds("connect_timeout", v["connect_timeout"], raw["connect_timeout"], DefaultConnectTimeout)
	s.KeepaliveInterval = d.seconds("keepalive_interval", v["keepalive_interval"], raw["keepalive_interval"], DefaultKeepaliveInterval)
	if s.KeepaliveInterval < MinKeepaliveInterval {
		s.KeepaliveInterval = MinKeepaliveInterval
	}
	s.MaxMessageBytes = d.megabytes("max_message_mb", v["max_message_mb"], raw["max_message_mb"], DefaultMaxMessageMB)
	if kb, ok := d.positive("max_result_kb", v["max_result_kb"], raw["max_result_kb"], "kilobytes", 4<<20); ok {
		s.MaxResultBytes = int(kb * (1 << 10))
	}
	if n, ok := d.positive("max_server_requests", v["max_server_requests"], raw["max_server_requests"], "requests", 1<<16); ok {
		s.MaxServerRequests = max(int(n), 1)
	}
	d.logLimits(s, v, raw)
	d.lazyKeys(s, v, raw)
	s.Protocol = strings.ToLower(strings.TrimSpace(d.str("protocol", v["protocol"], raw["protocol"])))
	switch {
	case s.Protocol == "":
		s.Protocol = ProtocolAuto
	case s.Protocol != ProtocolAuto && !slices.Contains(ProtocolRevisions, s.Protocol):
		d.fail("protocol", "want auto or one of %s, got %s", strings.Join(ProtocolRevisions, ", "), got(raw["protocol"]))
	}
	s.Enabled = d.boolish("enabled", v["enabled"], raw["enabled"], true)
	s.Catalog = strings.TrimSpace(d.str("catalog", v["catalog"], raw["catalog"]))
	s.SupportsParallelToolCalls = d.boolish("supports_parallel_tool_calls", v["supports_parallel_tool_calls"], raw["supports_parallel_tool_calls"], false)
	s.NoInstructions = !d.boolish("instructions", v["instructions"], raw["instructions"], true)

	if tv := v["tools"]; tv != nil {
		tm := d.rawMap("tools", tv, raw["tools"])
		for k := range tm {
			if !knownToolsKeys[k] {
				s.Unknown = append(s.Unknown, "tools."+k)
			}
		}
		s.Tools.Include = d.strList("tools.include", tm["include"], sub(raw["tools"], "include"))
		s.Tools.Exclude = d.strList("tools.exclude", tm["exclude"], sub(raw["tools"], "exclude"))
		s.Tools.Resources = d.boolish("tools.resources", tm["resources"], sub(raw["tools"], "resources"), true)
		s.Tools.Prompts = d.boolish("tools.prompts", tm["prompts"], sub(raw["tools"], "prompts"), true)
		switch s.Tools.OnChange = strings.ToLower(strings.TrimSpace(d.str("tools.on_change", tm["on_change"], sub(raw["tools"], "on_change")))); s.Tools.OnChange {
		case "":
			s.Tools.OnChange = OnChangeWarn
		case OnChangeWarn, OnChangeDeny:
		default:
			d.fail("tools.on_change", "want warn or deny, got %s", got(sub(raw["tools"], "on_change")))
		}
	}

	s.Auth = strings.ToLower(strings.TrimSpace(d.str("auth", v["auth"], raw["auth"])))
	if ov := v["oauth"]; ov != nil {
		om := d.rawMap("oauth", ov, raw["oauth"])
		ro := raw["oauth"]
		for k := range om {
			if !knownOAuthKeys[k] && !grantOAuthKeys[k] {
				s.Unknown = append(s.Unknown, "oauth."+k)
			}
		}
		s.OAuth.ClientID = d.str("oauth.client_id", om["client_id"], sub(ro, "client_id"))
		s.OAuth.ClientSecret = d.str("oauth.client_secret", om["client_secret"], sub(ro, "client_secret"))
		if sc, ok := om["scope"].([]any); ok {
			s.OAuth.Scope = strings.Join(d.strList("oauth.scope", sc, sub(ro, "scope")), " ")
		} else {
			s.OAuth.Scope = d.str("oauth.scope", om["scope"], sub(ro, "scope"))
		}
		s.OAuth.RedirectPort = d.int("oauth.redirect_port", om["redirect_port"], sub(ro, "redirect_port"))
		if s.OAuth.RedirectPort < 0 || s.OAuth.RedirectPort > 65535 {
			d.fail("oauth.redirect_port", "want a port between 0 and 65535, got %d", s.OAuth.RedirectPort)
		}
		if cn := d.str("oauth.client_name", om["client_name"], sub(ro, "client_name")); cn != "" {
			s.OAuth.ClientName = cn
		}
		s.OAuth.Timeout = d.seconds("oauth.timeout", om["timeout"], sub(ro, "timeout"), DefaultOAuthTimeout)
		s.OAuth.ExtraParams = d.strMap("oauth.extra_params", om["extra_params"], sub(ro, "extra_params"))
		s.OAuth.ClientMetadataURL = d.str("oauth.client_metadata_url", om["client_metadata_url"], sub(ro, "client_metadata_url"))
		d.oauthGrant(&s.OAuth, om, ro)
		s.OAuth.DPoP = d.dpopMode("oauth.dpop", om["dpop"], sub(ro, "dpop"))
	}
	// The settings of another auth method (a block named after it, e.g.
	// exec:) are the method's plugin's, not unknown keys.
	if s.Auth != "" && s.Auth != "oauth" {
		s.Unknown = slices.DeleteFunc(s.Unknown, func(k string) bool { return k == s.Auth })
	}

	switch sv := v["ssl_verify"].(type) {
	case nil:
	case string:
		if b, ok := parseBoolish(sv); ok {
			s.SSLVerify = b
		} else {
			s.CABundle = d.expandHome(strings.TrimSpace(sv))
		}
	default:
		s.SSLVerify = d.boolish("ssl_verify", sv, raw["ssl_verify"], true)
	}
	switch cc := v["client_cert"].(type) {
	case []any:
		parts := d.strList("client_cert", cc, raw["client_cert"])
		if len(parts) < 1 || len(parts) > 2 {
			d.fail("client_cert", "want a path or a list [cert, key], got a list of %d", len(parts))
		} else {
			s.ClientCert = d.expandHome(parts[0])
			if len(parts) == 2 {
				s.ClientKey = d.expandHome(parts[1])
				if v["client_key"] != nil {
					d.fail("client_key", "the key is already the second entry of client_cert; remove one of them")
				}
			}
		}
	default:
		s.ClientCert = d.expandHome(d.str("client_cert", cc, raw["client_cert"]))
	}
	if s.ClientKey == "" {
		s.ClientKey = d.expandHome(d.str("client_key", v["client_key"], raw["client_key"]))
	}
	s.Sampling = d.rawMap("sampling", v["sampling"], raw["sampling"])
	s.Elicitation = d.rawMap("elicitation", v["elicitation"], raw["elicitation"])
	s.NoRoots = !d.boolish("roots", v["roots"], raw["roots"], true)
	s.Sandbox = d.sandbox(v["sandbox"], raw["sandbox"], &s.Unknown)
	s.Isolation = d.isolation(v["isolation"], raw["isolation"])
	s.Plugin = d.plugin(v["plugin"], raw["plugin"], &s.Unknown)
	sort.Strings(s.Unknown)

	// Transport.
	switch {
	case s.URL != "" && s.Command != "":
		s.Warnings = append(s.Warnings, fmt.Sprintf("server %q: both url and command are set; using url (HTTP); remove one of them", name))
		if s.Transport == "" || s.Transport == "stdio" {
			s.Transport = "http"
		}
	case s.Transport == "":
		if s.URL != "" {
			s.Transport = "http"
		} else if s.Command != "" {
			s.Transport = "stdio"
		}
	}
	if s.Isolation == IsolationPerUser && s.Transport != "stdio" && s.Transport != "" {
		d.fail("isolation", "per_user runs one process per person, and a %s server has no process of hermes's to run; remove it or use a stdio server", s.Transport)
	}
	if s.Isolation == IsolationPerUser && s.Sandbox == nil {
		// One sandboxed process per person: an entry that names no
		// sandbox gets the default one, as `sandbox: {}` would give.
		s.Sandbox = d.sandbox(map[string]any{}, nil, &s.Unknown)
	}
	switch s.Transport {
	case "":
		if d.err == nil {
			d.err = fmt.Errorf("server %q: needs either command (a stdio server) or url (an HTTP server); add one of them", name)
		}
	case "stdio":
		if s.Command == "" {
			d.fail("command", "transport stdio needs a command; add command or set url instead")
		}
	case TransportHTTP, TransportSSE:
		if s.URL == "" {
			d.fail("url", "transport %s needs a url; add url", s.Transport)
		} else if u, err := url.Parse(s.URL); len(missing) == 0 && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
			d.fail("url", "want an http:// or https:// URL with a host name, got %s", got(raw["url"]))
		}
	}

	s.NeedsVars = missing
	switch {
	case len(missing) == 1:
		s.Err = fmt.Errorf("server %q: ${%s} is not set; set it in the environment or add %s=... to %s", name, missing[0], missing[0], envPath)
	case len(missing) > 1:
		refs := make([]string, len(missing))
		for i, m := range missing {
			refs[i] = "${" + m + "}"
		}
		s.Err = fmt.Errorf("server %q: %s are not set; set them in the environment or add them to %s", name, strings.Join(refs, ", "), envPath)
	default:
		s.Err = d.err
	}
	return s
}
