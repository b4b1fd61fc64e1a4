package catalog

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// TranslateOptions are the facts of one install that a manifest cannot
// know.
type TranslateOptions struct {
	// InstallDir is the absolute folder the entry was cloned into; needed
	// when the manifest has an install block, and substituted for
	// ${INSTALL_DIR}.
	InstallDir string
	// NoSandbox leaves the manifest's sandbox out of the entry (hermes mcp
	// install --no-sandbox).
	NoSandbox bool
	// PluginSHA256 is the sha256 of the plugin binary as found after the
	// bootstrap, for a manifest whose plugin block pins none. When both
	// are set they must agree.
	PluginSHA256 string
	// Env is the run's environment (as config.LoadEnv's; nil is the
	// process's): its HOME is the "~" of the sandbox's paths Plan shows.
	Env func(string) (string, bool)
}

// Prompts are the values an install asks for and saves to .env, whatever
// auth.type is (an api key, or a non-secret setting such as the folder a
// server serves). A stdio server gets each of them in its environment;
// the manifest's args, headers and sandbox may reference them as ${NAME}.
func (m *Manifest) Prompts() []EnvPrompt { return m.Auth.Env }

// Translate turns a manifest into the server entry an install writes to
// config.yaml under mcp_servers.<name>:
//
//   - stdio: command and args with ${INSTALL_DIR} substituted; env is
//     transport.env plus NAME: ${NAME} for each auth.env prompt, so the
//     value saved to .env reaches the server (the original wrote the value
//     to .env and left the server without it);
//   - http: url and transport.headers; auth.type api_key without headers
//     sends Authorization: Bearer ${MCP_<NAME>_API_KEY}; auth.type oauth
//     sets auth: oauth;
//   - enabled: true;
//   - the manifest's sandbox (stdio only) unless opts.NoSandbox;
//   - for a plugin block, the plugin: pin (absolute path inside the install
//     folder, sha256) and transport: or auth: naming the plugin.
//
// The tool selection (tools:) is the installer's to add.
func Translate(m *Manifest, opts TranslateOptions) (*config.ServerEntry, error) {
	if m == nil {
		return nil, errors.New("no manifest to translate")
	}
	sub, err := installDirSubst(m, opts)
	if err != nil {
		return nil, err
	}
	e := config.NewServerEntry()
	t := m.Transport
	switch t.Type {
	case "stdio":
		e.Command(sub(t.Command))
		if len(t.Args) > 0 {
			args := make([]string, len(t.Args))
			for i, a := range t.Args {
				args[i] = sub(a)
			}
			e.Args(args...)
		}
		for _, k := range keysOf(t.Env) {
			e.Env(k, sub(t.Env[k]))
		}
		for _, p := range m.Auth.Env {
			if _, set := t.Env[p.Name]; !set {
				e.Env(p.Name, "${"+p.Name+"}")
			}
		}
	case "http":
		e.URL(t.URL)
		for _, k := range keysOf(t.Headers) {
			e.Header(k, t.Headers[k])
		}
		if m.Auth.Type == "api_key" && len(t.Headers) == 0 {
			key := APIKeyVar(m.Name)
			if !slices.ContainsFunc(m.Auth.Env, func(p EnvPrompt) bool { return p.Name == key }) {
				return nil, fmt.Errorf("manifest of '%s': auth.type api_key sends Authorization: Bearer ${%s}, but auth.env does not declare %s; declare it or set transport.headers", m.Name, key, key)
			}
			e.Header("Authorization", "Bearer ${"+key+"}")
		}
	default:
		return nil, fmt.Errorf("manifest of '%s': transport.type %q is not stdio or http; fix the manifest", m.Name, clip(t.Type, 32))
	}
	switch m.Auth.Type {
	case "oauth":
		if t.Type != "http" {
			return nil, fmt.Errorf("manifest of '%s': auth.type oauth needs transport.type http; fix the manifest", m.Name)
		}
		e.Auth("oauth")
	case "", "none", "api_key":
	default:
		return nil, fmt.Errorf("manifest of '%s': auth.type %q is not none, api_key or oauth; fix the manifest", m.Name, clip(m.Auth.Type, 32))
	}
	e.Enabled(true)
	if t.NoRoots {
		e.Set("roots", false)
	}
	// Provenance: only an entry hermes installed is the catalog's (a
	// server of the user's that happens to share the name is not).
	e.Catalog(m.Name)
	if m.Sandbox != nil && !opts.NoSandbox {
		if t.Type != "stdio" {
			return nil, fmt.Errorf("manifest of '%s': a sandbox confines a stdio server, and this one is %s; fix the manifest", m.Name, t.Type)
		}
		e.Set("sandbox", sandboxBlock(m.Sandbox, sub))
	}
	if p := m.Plugin; p != nil {
		pin, err := pluginPin(m, opts)
		if err != nil {
			return nil, err
		}
		switch p.Kind {
		case "transport":
			e.Transport(p.Name)
		case "auth":
			e.Auth(p.Name)
		}
		e.Set("plugin", pin)
	}
	return e, nil
}

// installDirSubst returns the function that substitutes the install
// folder, after checking that the manifest and opts agree about it.
func installDirSubst(m *Manifest, opts TranslateOptions) (func(string) string, error) {
	uses := false
	for _, f := range refFields(m) {
		if names, _ := refs(f.value); slices.Contains(names, "INSTALL_DIR") {
			uses = true
			break
		}
	}
	switch {
	case uses && m.Install == nil:
		return nil, fmt.Errorf("manifest references %s but has no install block", installDirRef)
	case m.Install != nil && opts.InstallDir == "":
		return nil, fmt.Errorf("'%s' is cloned into an install folder, and none was given; this is a bug in hermes", m.Name)
	case opts.InstallDir != "" && !filepath.IsAbs(opts.InstallDir):
		return nil, fmt.Errorf("install folder %q is not an absolute path; this is a bug in hermes", opts.InstallDir)
	}
	dir := filepath.Clean(opts.InstallDir)
	return func(s string) string { return substituteInstallDir(s, dir) }, nil
}

// sandboxKeyOrder is the order sandbox keys are written in.
var sandboxKeyOrder = []string{"enforce", "writable", "deny_read", "network", "limits", "memory", "cpu_seconds", "open_files", "processes"}

// sandboxBlock copies a sandbox block for config.yaml: keys in a readable
// order, ${INSTALL_DIR} substituted in every string.
func sandboxBlock(v any, sub func(string) string) any {
	switch x := v.(type) {
	case string:
		return sub(x)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = sandboxBlock(y, sub)
		}
		return out
	case map[string]any:
		keys := keysOf(x)
		rank := func(k string) int {
			if i := slices.Index(sandboxKeyOrder, k); i >= 0 {
				return i
			}
			return len(sandboxKeyOrder)
		}
		slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
		out := make(config.Map, 0, len(keys))
		for _, k := range keys {
			out = append(out, config.KV{Key: k, Value: sandboxBlock(x[k], sub)})
		}
		return out
	}
	return v
}

// pluginPin is the plugin: block of the entry.
func pluginPin(m *Manifest, opts TranslateOptions) (config.Map, error) {
	p := m.Plugin
	if m.Install == nil {
		return nil, fmt.Errorf("manifest of '%s': the plugin binary comes from the install folder, and there is no install block; fix the manifest", m.Name)
	}
	if !filepath.IsLocal(p.Path) || filepath.Base(p.Path) != "hermes-"+p.Kind+"-"+p.Name {
		return nil, fmt.Errorf("manifest of '%s': plugin.path %q must name hermes-%s-%s inside the install folder; fix the manifest", m.Name, clip(p.Path, 64), p.Kind, p.Name)
	}
	pinned, found := strings.ToLower(p.SHA256), strings.ToLower(opts.PluginSHA256)
	sum := pinned
	switch {
	case pinned != "" && found != "" && pinned != found:
		return nil, fmt.Errorf("the plugin binary of '%s' has sha256 %s, but its manifest pins %s; the install did not build what was reviewed", m.Name, clip(found, 64), pinned)
	case sum == "":
		sum = found
	}
	if !sha256RE.MatchString(sum) {
		return nil, fmt.Errorf("the plugin binary of '%s' has no sha256 yet; hash it after the bootstrap and pass it as TranslateOptions.PluginSHA256", m.Name)
	}
	return config.Map{
		{Key: "kind", Value: p.Kind},
		{Key: "name", Value: p.Name},
		{Key: "path", Value: filepath.Join(filepath.Clean(opts.InstallDir), filepath.FromSlash(p.Path))},
		{Key: "sha256", Value: sum},
	}, nil
}

// Plan is what installing an entry will fetch, run and launch, for the
// installer to show before it runs anything. Every string comes from the
// manifest: print it through the ui Printer, which escapes it.
type Plan struct {
	// Name, Description and Source are the manifest's.
	Name, Description, Source string
	// Clone is "<url> @ <ref>" when the entry is cloned; "" otherwise.
	Clone string
	// InstallDir is where the clone goes ("" without one).
	InstallDir string
	// Bootstrap are the shell commands run in the clone, in order.
	Bootstrap []string
	// Launch is the command line that starts a stdio server (words
	// shell-quoted where needed, ${INSTALL_DIR} substituted), or
	// "connects to <url>" for an http server.
	Launch string
	// Plugin describes a plugin binary the entry ships; "" for none.
	Plugin string
	// Sandbox describes the isolation, one short line each
	// (config.SandboxSettings.Describe, with ${VAR}s shown as written);
	// nil when the server runs without one (see SandboxOff).
	Sandbox []string
	// SandboxOff is set when the manifest asks for a sandbox and the
	// install leaves it out (TranslateOptions.NoSandbox).
	SandboxOff bool
	// Asks lists the values the install prompts for, saved to .env.
	Asks []string
	// Auth is "none", "api key", "OAuth (browser login on first
	// connection)" or "OAuth via <provider>".
	Auth string
}

// Plan says what installing m with opts will do.
func (m *Manifest) Plan(opts TranslateOptions) (*Plan, error) {
	if m == nil {
		return nil, errors.New("no manifest to plan")
	}
	sub, err := installDirSubst(m, opts)
	if err != nil {
		return nil, err
	}
	p := &Plan{Name: m.Name, Description: m.Description, Source: m.Source}
	if in := m.Install; in != nil {
		p.Clone = in.URL + " @ " + in.Ref
		p.InstallDir = filepath.Clean(opts.InstallDir)
		p.Bootstrap = slices.Clone(in.Bootstrap)
	}
	switch m.Transport.Type {
	case "http":
		p.Launch = "connects to " + m.Transport.URL
	default:
		words := []string{quoteWord(sub(m.Transport.Command))}
		for _, a := range m.Transport.Args {
			words = append(words, quoteWord(sub(a)))
		}
		p.Launch = strings.Join(words, " ")
	}
	if pl := m.Plugin; pl != nil {
		pin := "recorded at install, checked at every start"
		if pl.SHA256 != "" {
			pin = "must be " + pl.SHA256
		}
		p.Plugin = fmt.Sprintf("hermes-%s-%s from %s (sha256 %s)", pl.Kind, pl.Name, pl.Path, pin)
	}
	switch {
	case m.Sandbox != nil && opts.NoSandbox:
		p.SandboxOff = true
	case m.Sandbox != nil:
		dir := ""
		if m.Install != nil {
			dir = filepath.Clean(opts.InstallDir)
		}
		s, err := parseSandbox(m.Sandbox, dir, opts.Env)
		if err != nil {
			return nil, fmt.Errorf("the sandbox of '%s' is not valid: %s", m.Name, oneLine(showRefsQuoted(err.Error())))
		}
		for _, l := range s.Describe() {
			p.Sandbox = append(p.Sandbox, showRefs(l))
		}
	}
	for _, e := range m.Auth.Env {
		a := e.Name
		switch {
		case e.Secret && !e.Required:
			a += " (secret, optional)"
		case e.Secret:
			a += " (secret)"
		case !e.Required:
			a += " (optional)"
		}
		p.Asks = append(p.Asks, a)
	}
	switch m.Auth.Type {
	case "api_key":
		p.Auth = "api key"
	case "oauth":
		p.Auth = "OAuth (browser login on first connection)"
		if m.Auth.Provider != "" {
			p.Auth = "OAuth via " + m.Auth.Provider
		}
	default:
		p.Auth = "none"
	}
	return p, nil
}

// Lines is the plan as lines to print, in the order things happen.
func (p *Plan) Lines() []string {
	var l []string
	if p.Source != "" {
		l = append(l, "Source: "+p.Source)
	}
	if p.Clone != "" {
		l = append(l, "Clone: "+p.Clone, "  into "+p.InstallDir)
	}
	if len(p.Bootstrap) > 0 {
		l = append(l, "Bootstrap (run in the clone):")
		for _, c := range p.Bootstrap {
			l = append(l, "  $ "+c)
		}
	}
	l = append(l, "Launch: "+p.Launch)
	if p.Plugin != "" {
		l = append(l, "Plugin: "+p.Plugin)
	}
	switch {
	case p.SandboxOff:
		l = append(l, "Sandbox: none (--no-sandbox; its manifest asks for one)")
	case len(p.Sandbox) == 0:
		l = append(l, "Sandbox: none (runs with your user's rights)")
	default:
		l = append(l, "Sandbox:")
		for _, s := range p.Sandbox {
			l = append(l, "  "+s)
		}
	}
	l = append(l, "Auth: "+p.Auth)
	if len(p.Asks) > 0 {
		l = append(l, "Asks for: "+strings.Join(p.Asks, ", ")+" (saved to .env)")
	}
	return l
}

var plainWord = lazyregexp.New(`^[A-Za-z0-9_./:=@%+,${}~-]+$`)

// quoteWord quotes s as a POSIX shell word when it needs it; ${VAR}
// references stay readable.
func quoteWord(s string) string {
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
