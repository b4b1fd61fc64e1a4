package add

import (
	"errors"
	neturl "net/url"
	"slices"
	"strings"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/importer"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/toolview"
)

// Preset fills the transport of a well-known server.
type Preset struct {
	command string
	args    []string
}

// Presets are the names --preset accepts.
var Presets = map[string]Preset{
	"codex": {command: "codex", args: []string{"mcp-server"}},
}

var EnvNameRE = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)

// AuthNameRE is the name of an auth plugin --auth accepts.
var AuthNameRE = lazyregexp.New(`^[a-z0-9][a-z0-9_-]*$`)

// logsIn reports whether 'hermes mcp add' logs in before probing: OAuth
// and third-party auth plugins (exec needs its block written first; header
// asks for a token).
func (o *AddOptions) logsIn() bool {
	return o.Auth != "" && o.Auth != "header" && o.Auth != "exec"
}

// AddPlan is the validated request.
type AddPlan struct {
	Entry       *config.ServerEntry
	stdio       bool
	include     []string // from --tools
	interactive bool     // a person answers the questions
	// secrets are .env values to write on save (a bearer token typed, a
	// client secret), which the entry references as ${KEY}.
	Secrets []DotEnvValue
	// saved is set once the entry is written.
	saved bool

	// filter is the tools filter the entry came with (an imported one);
	// it pre-checks the checklist.
	filter toolview.Filter
	// overwrite replaces an existing entry of the name without asking
	// (import --force); noAuthPrompt skips the "Does this server require
	// authentication?" question (the entry says how it authenticates);
	// imported words failures for 'hermes mcp import'.
	overwrite, noAuthPrompt, imported bool
	// result is how the entry was saved (resultSaved, resultDisabled,
	// resultUnprobed); tools "N/M" tools enabled, when probed.
	result, tools string
	// secretFrom says where each secret came from ("env GITHUB_TOKEN"),
	// for the line that reports it saved.
	secretFrom map[string]string
}

// How addEntry saved an entry.
const (
	ResultSaved    = "saved"
	ResultDisabled = "saved_disabled"
	ResultUnprobed = "saved_unprobed"
)

// DotEnvValue is one KEY=value of .env.
type DotEnvValue struct{ key, value string }

// pending returns the secrets as the config layer's pending .env values.
func (p *AddPlan) pending() map[string]string {
	if len(p.Secrets) == 0 {
		return nil
	}
	m := map[string]string{}
	for _, s := range p.Secrets {
		m[s.key] = s.value
	}
	return m
}

// BuildAddEntry validates the options and builds the entry to save (without
// tools and enabled). Errors are usage errors.
func BuildAddEntry(o *AddOptions) (*config.ServerEntry, error) {
	o.secrets, o.secretNotes = nil, nil
	if !config.ValidName(o.Name) {
		return nil, cmdkit.Usagef("invalid server name '%s': use only letters, digits, '_' and '-'", o.Name)
	}
	type kv struct{ k, v string }
	var envs []kv
	for _, item := range o.Envs {
		k, v, ok := strings.Cut(item, "=")
		switch {
		case !ok:
			return nil, cmdkit.Usagef("Invalid --env value '%s' (expected KEY=VALUE)", item)
		case k == "":
			return nil, cmdkit.Usagef("Invalid --env value '%s' (missing variable name)", item)
		case !EnvNameRE.MatchString(k):
			return nil, cmdkit.Usagef("Invalid --env variable name '%s'", k)
		}
		envs = append(envs, kv{k, v})
	}
	command, url := o.Command, o.URL
	args := o.ChildArgs
	hasArgs := o.HasChildArgs
	if o.DashDash && command == "" && url == "" && o.Preset == "" && len(args) > 0 {
		// hermes mcp add NAME -- CMD ARGS...: the form other clients use.
		command, args = args[0], args[1:]
	}
	if o.Preset != "" {
		p, ok := Presets[o.Preset]
		if !ok {
			names := make([]string, 0, len(Presets))
			for n := range Presets {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, cmdkit.Usagef("Unknown MCP preset: %s (known: %s)", o.Preset, strings.Join(names, ", "))
		}
		// Explicit flags win: the preset fills only what was not given.
		if command == "" && url == "" {
			command = p.command
			if !hasArgs {
				args, hasArgs = p.args, true
			}
		}
	}
	if url != "" && len(envs) > 0 {
		return nil, cmdkit.Usagef("--env is only supported for stdio MCP servers (--command or stdio presets)")
	}
	switch {
	case url == "" && command == "":
		return nil, cmdkit.Usagef("Must specify --url <endpoint>, --command <cmd>, or --preset <name>; e.g. hermes mcp add %s --url https://example.com/mcp, or hermes mcp add %s --command npx --args -y some-mcp-server", o.Name, o.Name)
	case url != "" && command != "":
		return nil, cmdkit.Usagef("give either --url (HTTP server) or --command (stdio server), not both")
	case url != "" && hasArgs && len(args) > 0:
		return nil, cmdkit.Usagef("--args is only for stdio MCP servers (--command); an HTTP server takes no argv")
	case url != "" && o.Cwd != "":
		return nil, cmdkit.Usagef("--cwd is only for stdio MCP servers (--command)")
	case command != "" && len(o.Headers) > 0:
		return nil, cmdkit.Usagef("--header is only for HTTP MCP servers (--url)")
	case command != "" && o.Auth != "":
		return nil, cmdkit.Usagef("--auth is only for HTTP MCP servers (--url)")
	}
	if url != "" {
		// Checked with --no-probe too: a saved URL that can never connect
		// helps nobody. ${VAR}s are resolved later, so only a literal
		// scheme is checked.
		if err := CheckServerURL(url); err != nil {
			return nil, cmdkit.Usagef("--url %q %s; give the server's http:// or https:// endpoint, e.g. https://example.com/mcp", url, err)
		}
	}
	switch o.Auth {
	case "", "oauth", "header", "exec":
	default:
		// A third-party auth plugin, hermes-auth-<name>.
		if !AuthNameRE.MatchString(o.Auth) {
			return nil, cmdkit.Usagef("unknown --auth '%s': use oauth, header, exec or the name of an auth plugin (hermes-auth-<name>)", o.Auth)
		}
	}
	if o.Auth != "oauth" {
		for _, f := range []struct {
			flag string
			set  bool
		}{{"--client-id", o.ClientID != ""}, {"--client-secret", o.ClientSecret != ""}, {"--scope", o.Scope != ""}} {
			if f.set {
				return nil, cmdkit.Usagef("%s is only for --auth oauth", f.flag)
			}
		}
	}
	// How to log in matters where add may log in: --auth oauth (or a
	// plugin), and a server that turns out to use OAuth.
	if (o.NoBrowser || o.Device) && (o.Auth == "header" || o.Auth == "exec") {
		return nil, cmdkit.Usagef("--no-browser and --device are for logging in (--auth oauth), not --auth %s", o.Auth)
	}

	entry := config.NewServerEntry()
	if url != "" {
		entry.URL(url)
		if o.Transport != "" {
			entry.Transport(o.Transport)
		}
		for _, h := range o.Headers {
			k, v, ok := strings.Cut(h, ":")
			k, v = strings.TrimSpace(k), strings.TrimSpace(v)
			if !ok || k == "" || strings.ContainsAny(k, " \t") {
				return nil, cmdkit.Usagef("Invalid --header value '%s' (expected 'Name: value')", h)
			}
			entry.Header(k, o.keepSecret(k, v, true))
		}
		if o.Auth != "" && o.Auth != "header" {
			entry.Auth(o.Auth)
		}
		if o.ClientID != "" {
			entry.OAuth("client_id", o.ClientID)
		}
		if o.ClientSecret != "" {
			entry.OAuth("client_secret", "${"+ClientSecretVar(o.Name)+"}")
		}
		if o.Scope != "" {
			entry.OAuth("scope", o.Scope)
		}
	} else {
		entry.Command(command)
		if hasArgs && len(args) > 0 {
			entry.Args(args...)
		}
		for _, e := range envs {
			entry.Env(e.k, o.keepSecret(e.k, e.v, false))
		}
		if o.Cwd != "" {
			entry.Cwd(o.Cwd)
		}
		if name, _ := config.TransportName(o.Transport); o.Transport != "" && name != config.TransportStdio {
			return nil, cmdkit.Usagef("--transport is only for --url servers")
		}
	}
	if o.ConnectTimeout > 0 {
		entry.ConnectTimeout(o.ConnectTimeout)
	}
	if o.Timeout > 0 {
		entry.Timeout(o.Timeout)
	}
	return entry, nil
}

// HasHeader reports whether the entry sets header key (case-insensitively).
func HasHeader(entry *config.ServerEntry, key string) bool {
	v, _ := entry.Fields.Get("headers")
	m, _ := v.(config.Map)
	for _, kv := range m {
		if strings.EqualFold(kv.Key, key) {
			return true
		}
	}
	return false
}

// ScreenAdd refuses an entry the security check rejects (host/screening),
// before anything is written, logged in to or started: the entry as it
// would be saved, ${VAR}s read as they would be at run time.
func ScreenAdd(e *cmdkit.Env, name string, plan *AddPlan) error {
	srv, err := config.LoadEntryEnv(e.Home, name, plan.Entry, plan.pending(), e.F.ConfigEnv())
	if err != nil {
		return cmdkit.Failf("%s", cmdkit.OneLine(err.Error()))
	}
	var re *screening.RejectedError
	if err := screening.Admit(srv); errors.As(err, &re) {
		return cmdkit.Failf("Server '%s' was NOT saved due to suspicious configuration. %s; check where this command came from before adding it",
			name, cmdkit.OneLine(strings.Join(re.Messages(), "; ")))
	}
	return nil
}

// SaveAdd writes the secrets (a token typed, a client secret) and the
// entry, once the security check admits it.
func SaveAdd(e *cmdkit.Env, name string, plan *AddPlan) error {
	if err := ScreenAdd(e, name, plan); err != nil {
		return err
	}
	for _, s := range plan.Secrets {
		if err := config.SetDotEnv(e.Home, s.key, s.value); err != nil {
			return cmdkit.Failf("saving %s to %s/.env: %s", s.key, e.Home, cmdkit.OneLine(err.Error()))
		}
	}
	err := config.Edit(e.Home, func(d *config.Document) error { return d.SetServer(name, plan.Entry) })
	if err != nil {
		return cmdkit.Failf("saving '%s': %s", name, cmdkit.OneLine(err.Error()))
	}
	plan.saved = true
	for _, s := range plan.Secrets {
		what := "API key"
		if s.key == ClientSecretVar(name) {
			what = "OAuth client secret"
		}
		if from := plan.secretFrom[s.key]; from != "" {
			what = "Secret of " + from
		}
		e.P.OK("%s saved to %s/.env as %s", what, e.Home, s.key)
	}
	return nil
}

// keepSecret is what the entry keeps of a --header or --env value: a
// secret (by its name or its shape) goes to .env, as add-json and import
// do, and the entry refers to it as ${VAR}.
func (o *AddOptions) keepSecret(key, val string, header bool) string {
	written, sec, notes := importer.MoveSecret(o.Name, key, val, header)
	if sec != nil {
		o.secrets = append(o.secrets, *sec)
	}
	o.secretNotes = append(o.secretNotes, notes...)
	return written
}

// ClientSecretVar is the .env variable that holds the OAuth client secret
// of a server added with 'hermes mcp add --client-secret':
// MCP_<NAME>_CLIENT_SECRET, the name as in APIKeyVar.
func ClientSecretVar(name string) string {
	return strings.TrimSuffix(cmdkit.APIKeyVar(name), "_API_KEY") + "_CLIENT_SECRET"
}

// CheckServerURL refuses a --url that is not an absolute http(s) URL with
// a host; of one holding ${VAR}s only the scheme is checked (the config
// layer resolves the rest), and one that starts with a ${VAR} is left to
// it whole.
func CheckServerURL(raw string) error {
	if strings.HasPrefix(raw, "${") {
		return nil
	}
	if strings.Contains(raw, "${") {
		// The rest is resolved later: the scheme is what can be checked.
		if l := strings.ToLower(raw); strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
			return nil
		}
		return errors.New("is not an http(s) URL")
	}
	u, err := neturl.Parse(raw)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("is not an http(s) URL")
	case u.Host == "":
		return errors.New("has no host")
	}
	return nil
}
