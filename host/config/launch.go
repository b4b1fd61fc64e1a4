package config

import (
	"os"
	"sort"
	"strings"
)

// Transports a server entry can name without a plugin of its own: the
// values TransportName returns for the built-in transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http"
	TransportSSE   = "sse"
)

// TransportName is the one rule that turns what an entry writes under
// transport: or type: into the transport it stands for: "stdio"; "http"
// for streamable HTTP however it is spelled (http, streamable-http,
// streamable_http, streamablehttp, streamableHttp); "sse" for legacy SSE;
// any other value, lower-cased, names a third-party transport plugin
// (hermes-transport-<value>). builtin reports whether t is one of the
// three built-in transports.
func TransportName(t string) (name string, builtin bool) {
	t = strings.ToLower(strings.TrimSpace(t))
	// Without - and _ (a Replacer built at each call cost more than the
	// rest of a cached listing's look at the entry).
	plain := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return -1
		}
		return r
	}, t)
	switch plain {
	case "stdio":
		return TransportStdio, true
	case "http", "streamablehttp":
		return TransportHTTP, true
	case "sse":
		return TransportSSE, true
	}
	return t, false
}

// TypeTransport maps the value of the type key other MCP clients write
// (Claude Code, VS Code, Cursor: "stdio", "http", "sse", also spelled
// "streamable-http" or "streamableHttp") to the transport it stands for,
// by TransportName. ok is false for a value that names none of the
// built-in transports: type: cannot name a plugin. config.yaml accepts type
// as a synonym of transport; transport wins when both are set.
func TypeTransport(t string) (transport string, ok bool) {
	name, builtin := TransportName(t)
	if !builtin {
		return "", false
	}
	return name, true
}

// Launch is what starting a server's transport needs, resolved from its
// entry by one rule (Server.Launch): every place that starts, describes or
// checks a server's transport reads it instead of the entry's keys.
type Launch struct {
	// Transport is the transport the server speaks: TransportStdio,
	// TransportHTTP, TransportSSE or a third-party transport's name.
	Transport string
	// Plugin is the transport plugin that serves it (the binary
	// hermes-transport-<Plugin>): "stdio" for stdio, "http" for http and
	// sse, else Transport.
	Plugin string
	// Pin is the plugin: block when it pins the transport plugin (that
	// exact binary, its sha256 checked at each start); nil otherwise.
	Pin *PluginPin
	// Local is set when the transport starts the server's command here:
	// command, args, env, cwd, the stderr log limits and the sandbox apply.
	Local bool
	// Remote is set when the transport reaches the server at its url:
	// url, headers and the TLS settings apply.
	Remote bool
	// Sandbox is the sandbox: block when it can apply (a local command
	// server); nil otherwise (see SandboxMisplaced).
	Sandbox *SandboxSettings
	// MaxMessageBytes bounds one message from the server
	// (max_message_mb), where its bytes arrive.
	MaxMessageBytes uint64
	// LogLinesPerSecond and LogBurst bound the server's stderr lines.
	LogLinesPerSecond, LogBurst int
}

// Launch resolves the entry into what starting its transport needs. It
// is a pure function of the entry's decoded fields, so an entry built in
// code (a Server literal) resolves exactly like one read from
// config.yaml.
func (s *Server) Launch() Launch {
	l := Launch{
		MaxMessageBytes:   s.MaxMessageBytes,
		LogLinesPerSecond: s.LogLinesPerSecond,
		LogBurst:          s.LogBurst,
	}
	l.Transport, _ = TransportName(s.Transport)
	switch {
	case l.Transport == "" && s.URL != "":
		l.Transport = TransportHTTP
	case l.Transport == "":
		l.Transport = TransportStdio
	}
	switch l.Transport {
	case TransportStdio:
		l.Plugin = TransportStdio
	case TransportHTTP, TransportSSE:
		l.Plugin = TransportHTTP
	default:
		l.Plugin = l.Transport
	}
	l.Local = l.Plugin == TransportStdio || l.Plugin != TransportHTTP && s.Command != ""
	l.Remote = l.Plugin != TransportStdio
	if p := s.Plugin; p != nil && p.Kind == "transport" && p.Name == l.Plugin {
		l.Pin = p
	}
	if l.Local && s.Command != "" {
		l.Sandbox = s.Sandbox
	}
	return l
}

// PinFor returns the entry's plugin: block when it pins the plugin
// hermes-<kind>-<name>, else nil.
func (s *Server) PinFor(kind, name string) *PluginPin {
	if p := s.Plugin; p != nil && p.Kind == kind && p.Name == name {
		return p
	}
	return nil
}

// SandboxMisplaced says why the entry's sandbox: block cannot apply (a
// remote server has no process here to confine); "" when it can or there
// is none.
func (s *Server) SandboxMisplaced() string {
	if s.Sandbox == nil || s.Launch().Sandbox != nil {
		return ""
	}
	return "server \"" + s.Name + "\": sandbox: confines a local (command) server; a remote server runs elsewhere; remove sandbox: from the entry"
}

// safeEnvNames are the host variables a stdio server inherits (SPEC §2).
var safeEnvNames = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LANG": true, "LC_ALL": true,
	"TERM": true, "SHELL": true, "TMPDIR": true,
	"SSL_CERT_FILE": true, "SSL_CERT_DIR": true,
}

// proxyEnvNames are matched case-insensitively.
var proxyEnvNames = map[string]bool{"HTTP_PROXY": true, "HTTPS_PROXY": true, "NO_PROXY": true, "ALL_PROXY": true}

// ChildEnv returns the environment of a command hermes starts (a stdio
// server, an install step): the safe baseline of the host's environment
// plus env (which wins), sorted so the result is stable. Nothing else of
// the host leaks in.
func ChildEnv(env map[string]string) []string { return ChildEnvFrom(nil, env) }

// ChildEnvFrom is ChildEnv with the host's environment given as parent
// ("KEY=value" lines, as os.Environ returns them; nil is the process's),
// for a caller that runs with an environment of its own.
func ChildEnvFrom(parent []string, env map[string]string) []string {
	if parent == nil {
		parent = os.Environ()
	}
	m := map[string]string{}
	for _, kv := range parent {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if safeEnvNames[k] || strings.HasPrefix(k, "XDG_") || proxyEnvNames[strings.ToUpper(k)] {
			m[k] = v
		}
	}
	for k, v := range env {
		m[k] = v
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
