package catalog

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/fields"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
)

// Limits on a manifest. A manifest is hostile input until it is parsed:
// anything larger than these is refused before it costs much memory or
// reaches a terminal or a config file.
const (
	// MaxManifestBytes caps the size of manifest.yaml (256 KiB).
	MaxManifestBytes = 256 << 10
	// MaxNameLen caps an entry's name.
	MaxNameLen = 64
	// MaxDescriptionLen caps description (in bytes).
	MaxDescriptionLen = 1024
	// MaxTextLen caps every other single value: a command, an argument, a
	// URL, an env value, a header, a bootstrap command.
	MaxTextLen = 4096
	// MaxPostInstallLen caps post_install.
	MaxPostInstallLen = 16 << 10
	// MaxListLen caps the lists and mappings of a manifest: args, env,
	// headers, auth.env, scopes, suggest, bootstrap.
	MaxListLen = 64
	// MaxToolNames caps tools.default_enabled and tools.default_excluded.
	MaxToolNames = 512
)

// installDirRef is the reference a stdio transport (and its sandbox)
// uses for the entry's install folder; it is substituted at install.
const installDirRef = "${INSTALL_DIR}"

// homeVar may be referenced besides installDirRef and the auth.env names:
// the user's home folder is no secret.
const homeVar = "HOME"

// Error is a manifest that cannot be used. Msg is one line that names the
// key at fault and what it held.
type Error struct {
	// Field is the key at fault ("transport.url", "auth.env[1].name"); ""
	// for the file as a whole.
	Field string
	// Msg is the whole message, starting with the key.
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// FutureError is a manifest written for a newer hermes: its
// manifest_version is above ManifestVersion. The catalog lists such an
// entry with a warning instead of hiding it.
type FutureError struct {
	// Version is the manifest's manifest_version.
	Version uint64
	// Name and Description are read on a best-effort basis ("" when
	// missing or unusable), so the entry can still be listed.
	Name, Description string
}

func (e *FutureError) Error() string {
	return fmt.Sprintf("manifest_version %d unsupported (this Hermes understands version %d)", e.Version, ManifestVersion)
}

var (
	nameRE      = lazyregexp.New(`^[A-Za-z0-9_-]+$`)
	envNameRE   = lazyregexp.New(`^[A-Za-z_][A-Za-z0-9_]*$`)
	headerRE    = lazyregexp.New("^[A-Za-z0-9!#$%&'*+.^_`|~-]+$")
	fullSHARE   = lazyregexp.New(`^[0-9a-f]{40}$`)
	scpRE       = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]*@[A-Za-z0-9][A-Za-z0-9.-]*:[A-Za-z0-9~._/-]+$`)
	sha256RE    = lazyregexp.New(`^[0-9a-fA-F]{64}$`)
	apiKeyVarRE = lazyregexp.New(`[^A-Za-z0-9_]`)
	// configKeyRE is the start of a config package message naming a key.
	configKeyRE = lazyregexp.New(`^key "([a-z_.]+)": `)
)

// APIKeyVar is the .env variable that holds the API key of an http entry
// with auth.type api_key and no transport.headers: MCP_<NAME>_API_KEY,
// the name upper-cased with every character outside [A-Za-z0-9_] as "_".
func APIKeyVar(name string) string {
	return "MCP_" + strings.Trim(apiKeyVarRE.ReplaceAllString(strings.ToUpper(name), "_"), "_") + "_API_KEY"
}

// Parse reads and validates one manifest.yaml, in the order of the
// original's schema v1 (manifest_version, name, description, source,
// transport, auth, tools, suggest, install, post_install), then hermes's
// additions (sandbox, plugin) and the ${VAR} references. The first problem
// found is returned: a *FutureError when the manifest is for a newer
// hermes, else an *Error. Keys this version does not know are kept in
// Manifest.Unknown, not refused. Parse does not check that the name
// matches the entry's folder; the catalog does.
func Parse(src []byte) (*Manifest, error) {
	if len(src) > MaxManifestBytes {
		return nil, fail("", "the manifest is %d bytes, over the limit of %d KiB; make it smaller", len(src), MaxManifestBytes>>10)
	}
	top, err := decode(src)
	if err != nil {
		return nil, err
	}
	p := &manifestParser{top: top}
	m, err := p.parse()
	if err != nil {
		return nil, err
	}
	sort.Strings(p.unknown)
	m.Unknown = p.unknown
	return m, nil
}

// decode parses src as one YAML document whose top level is a mapping.
// Anchors and aliases are refused: a manifest has no use for them, and
// nested aliases can expand a small file into a huge one.
func decode(src []byte) (map[string]any, error) {
	f, err := parser.ParseBytes(src, 0)
	if err != nil {
		return nil, yamlError(err)
	}
	if len(f.Docs) != 1 {
		return nil, fail("", "the manifest holds %d YAML documents; keep exactly one (no --- separators)", len(f.Docs))
	}
	body := f.Docs[0].Body
	if body == nil {
		return nil, fail("", "the manifest is empty; start it with manifest_version: %d", ManifestVersion)
	}
	var alias error
	ast.Walk(visitFunc(func(n ast.Node) bool {
		switch n.(type) {
		case *ast.AliasNode, *ast.AnchorNode:
			if alias == nil {
				tk := n.GetToken()
				alias = fail("", "line %d: YAML anchors and aliases (&name, *name) are not allowed in a manifest; write the values out", tk.Position.Line)
			}
			return false
		}
		return true
	}), body)
	if alias != nil {
		return nil, alias
	}
	var v any
	if err := yaml.NodeToValue(body, &v); err != nil {
		return nil, yamlError(err)
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, fail("", "the manifest must be a mapping of keys such as manifest_version and name, got %s", fields.Kind(v))
	}
	return top, nil
}

type visitFunc func(ast.Node) bool

func (f visitFunc) Visit(n ast.Node) ast.Visitor {
	if n == nil || !f(n) {
		return nil
	}
	return f
}

// yamlError turns a goccy error into one line with its position.
func yamlError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := oneLine(ye.GetMessage())
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			return fail("", "line %d column %d: %s; fix the YAML", tk.Position.Line, tk.Position.Column, clip(msg, 200))
		}
		return fail("", "%s; fix the YAML", clip(msg, 200))
	}
	return fail("", "%s; fix the YAML", clip(oneLine(err.Error()), 200))
}

func fail(field, format string, args ...any) *Error {
	return &Error{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// manifestParser reads the decoded manifest; unknown collects the keys it
// does not know.
type manifestParser struct {
	top     map[string]any
	unknown []string
}

var (
	topKeys       = []string{"manifest_version", "name", "description", "source", "transport", "auth", "tools", "suggest", "install", "post_install", "sandbox", "plugin"}
	transportKeys = []string{"type", "command", "args", "url", "version", "env", "headers", "roots"}
	authKeys      = []string{"type", "env", "provider", "scopes", "env_var"}
	promptKeys    = []string{"name", "prompt", "required", "secret", "default"}
	toolsKeys     = []string{"default_enabled", "default_excluded"}
	suggestKeys   = []string{"keywords", "hosts"}
	installKeys   = []string{"type", "url", "ref", "bootstrap"}
	pluginKeys    = []string{"kind", "name", "path", "sha256"}
)

// noteUnknown records the keys of m outside known, prefixed.
func (p *manifestParser) noteUnknown(prefix string, m map[string]any, known []string) {
	for k := range m {
		if !slices.Contains(known, k) {
			p.unknown = append(p.unknown, prefix+clip(k, 64))
		}
	}
}

func (p *manifestParser) parse() (*Manifest, error) {
	top := p.top
	m := &Manifest{}
	if err := p.version(m); err != nil {
		return nil, err
	}
	p.noteUnknown("", top, topKeys)

	var err error
	if m.Name, err = text("name", top["name"], MaxNameLen); err != nil {
		return nil, err
	}
	if m.Name == "" || !nameRE.MatchString(m.Name) {
		return nil, fail("name", "name: want a name of letters, digits, - and _, got %s", show(top["name"]))
	}

	if m.Description, err = text("description", top["description"], MaxDescriptionLen); err != nil {
		return nil, err
	}
	m.Description = oneLine(m.Description)
	if m.Description == "" {
		return nil, fail("description", "description: want one line saying what the server does, got %s", show(top["description"]))
	}

	if m.Source, err = text("source", top["source"], MaxTextLen); err != nil {
		return nil, err
	}
	if m.Source != "" && !httpURL(m.Source) {
		return nil, fail("source", "source: want an http:// or https:// URL, got %s", show(m.Source))
	}

	if err := p.transport(m); err != nil {
		return nil, err
	}
	if err := p.auth(m); err != nil {
		return nil, err
	}
	if err := p.tools(m); err != nil {
		return nil, err
	}
	if err := p.suggest(m); err != nil {
		return nil, err
	}
	if err := p.install(m); err != nil {
		return nil, err
	}
	if m.PostInstall, err = text("post_install", top["post_install"], MaxPostInstallLen); err != nil {
		return nil, err
	}
	if err := p.sandbox(m); err != nil {
		return nil, err
	}
	if err := p.plugin(m); err != nil {
		return nil, err
	}
	if err := checkRefs(m); err != nil {
		return nil, err
	}
	return m, nil
}

// version checks manifest_version; a newer one is a *FutureError with
// whatever name and description can be read.
func (p *manifestParser) version(m *Manifest) error {
	v, set := p.top["manifest_version"]
	if !set {
		return fail("manifest_version", "manifest_version is missing (this Hermes understands version %d); add manifest_version: %d", ManifestVersion, ManifestVersion)
	}
	var n uint64
	switch t := v.(type) {
	case uint64:
		n = t
	case int64:
		if t > 0 {
			n = uint64(t)
		}
	case int:
		if t > 0 {
			n = uint64(t)
		}
	default:
		return fail("manifest_version", "manifest_version %s unsupported (this Hermes understands version %d)", show(v), ManifestVersion)
	}
	switch {
	case n == ManifestVersion:
		m.Version = ManifestVersion
		return nil
	case n > ManifestVersion:
		fe := &FutureError{Version: n}
		if s, ok := p.top["name"].(string); ok && len(s) <= MaxNameLen && nameRE.MatchString(s) {
			fe.Name = s
		}
		if s, ok := p.top["description"].(string); ok && len(s) <= MaxDescriptionLen && utf8.ValidString(s) {
			fe.Description = oneLine(s)
		}
		return fe
	}
	return fail("manifest_version", "manifest_version %s unsupported (this Hermes understands version %d)", show(v), ManifestVersion)
}

func (p *manifestParser) transport(m *Manifest) error {
	tv, set := p.top["transport"]
	if !set || tv == nil {
		return fail("transport", "transport is missing; add a transport: mapping with type stdio or http")
	}
	t, ok := tv.(map[string]any)
	if !ok {
		return fail("transport", "transport: want a mapping with type stdio or http, got %s", fields.Kind(tv))
	}
	p.noteUnknown("transport.", t, transportKeys)
	tr := &m.Transport
	var err error
	if tr.Type, err = text("transport.type", t["type"], 16); err != nil {
		return err
	}
	if tr.Type != "stdio" && tr.Type != "http" {
		return fail("transport.type", "transport.type: want stdio or http, got %s", show(t["type"]))
	}
	stdio := tr.Type == "stdio"

	if tr.Command, err = text("transport.command", t["command"], MaxTextLen); err != nil {
		return err
	}
	switch {
	case stdio && strings.TrimSpace(tr.Command) == "":
		return fail("transport.command", "transport.command: a stdio server needs the command that starts it, got %s", show(t["command"]))
	case !stdio && tr.Command != "":
		return fail("transport.command", "transport.command: only for type stdio; an http server is reached by url")
	}
	if tr.Args, err = textList("transport.args", t["args"], MaxListLen, MaxTextLen); err != nil {
		return err
	}
	if !stdio && len(tr.Args) > 0 {
		return fail("transport.args", "transport.args: only for type stdio; an http server is reached by url")
	}

	if tr.URL, err = text("transport.url", t["url"], MaxTextLen); err != nil {
		return err
	}
	switch {
	case !stdio && !httpURL(tr.URL):
		return fail("transport.url", "transport.url: an http server needs an http:// or https:// URL with a host name, got %s", show(t["url"]))
	case stdio && tr.URL != "":
		return fail("transport.url", "transport.url: only for type http; a stdio server is started by command")
	}

	if tr.Version, err = text("transport.version", t["version"], 256); err != nil {
		return err
	}
	roots, err := boolean("transport.roots", t["roots"], true)
	if err != nil {
		return err
	}
	tr.NoRoots = !roots

	if tr.Env, err = textMap("transport.env", t["env"], envNameRE, "variable names such as API_URL"); err != nil {
		return err
	}
	if !stdio && len(tr.Env) > 0 {
		return fail("transport.env", "transport.env: only for type stdio; an http server runs elsewhere")
	}

	if tr.Headers, err = textMap("transport.headers", t["headers"], headerRE, "header names such as Authorization"); err != nil {
		return err
	}
	if stdio && len(tr.Headers) > 0 {
		return fail("transport.headers", "transport.headers: only for type http; pass a stdio server its settings through env")
	}
	for k, v := range tr.Headers {
		if strings.ContainsAny(v, "\r\n") {
			return fail("transport.headers", "transport.headers: the value of %s spans lines; write it on one line", show(k))
		}
	}
	return nil
}

func (p *manifestParser) auth(m *Manifest) error {
	a := &m.Auth
	a.Type = "none"
	av, set := p.top["auth"]
	if !set || av == nil {
		return p.apiKeyHeader(m)
	}
	am, ok := av.(map[string]any)
	if !ok {
		return fail("auth", "auth: want a mapping with type none, api_key or oauth, got %s", fields.Kind(av))
	}
	p.noteUnknown("auth.", am, authKeys)
	typ, err := text("auth.type", am["type"], 16)
	if err != nil {
		return err
	}
	if typ != "" {
		a.Type = typ
	}
	switch a.Type {
	case "none", "api_key", "oauth":
	default:
		return fail("auth.type", "auth.type: want none, api_key or oauth, got %s", show(am["type"]))
	}

	switch ev := am["env"].(type) {
	case nil:
	case []any:
		if len(ev) > MaxListLen {
			return fail("auth.env", "auth.env: %d entries, over the limit of %d", len(ev), MaxListLen)
		}
		for i, x := range ev {
			field := fmt.Sprintf("auth.env[%d]", i)
			pm, ok := x.(map[string]any)
			if !ok {
				return fail(field, "%s: want a mapping with name and prompt, got %s", field, fields.Kind(x))
			}
			p.noteUnknown(field+".", pm, promptKeys)
			ep, err := envPrompt(field, pm)
			if err != nil {
				return err
			}
			if slices.ContainsFunc(a.Env, func(o EnvPrompt) bool { return o.Name == ep.Name }) {
				return fail(field+".name", "%s.name: %s is declared twice; keep one", field, ep.Name)
			}
			a.Env = append(a.Env, ep)
		}
	default:
		return fail("auth.env", "auth.env: want a list of prompts (name, prompt, required, secret, default), got %s", fields.Kind(am["env"]))
	}

	if a.Provider, err = text("auth.provider", am["provider"], 256); err != nil {
		return err
	}
	if a.Scopes, err = textList("auth.scopes", am["scopes"], MaxListLen, 256); err != nil {
		return err
	}
	if a.EnvVar, err = text("auth.env_var", am["env_var"], 256); err != nil {
		return err
	}

	switch {
	case a.Type == "api_key" && len(a.Env) == 0:
		return fail("auth.env", "auth.env: auth.type api_key needs at least one prompt for the key")
	case a.Type == "oauth" && m.Transport.Type != "http":
		return fail("auth.type", "auth.type: oauth needs transport.type http")
	}
	return p.apiKeyHeader(m)
}

// apiKeyHeader: an http server with auth.type api_key and no headers of
// its own gets "Authorization: Bearer ${MCP_<NAME>_API_KEY}", so auth.env
// must declare that variable.
func (p *manifestParser) apiKeyHeader(m *Manifest) error {
	if m.Transport.Type != "http" || m.Auth.Type != "api_key" || len(m.Transport.Headers) > 0 {
		return nil
	}
	want := APIKeyVar(m.Name)
	if !slices.ContainsFunc(m.Auth.Env, func(e EnvPrompt) bool { return e.Name == want }) {
		return fail("auth.env", "auth.env: an http server with auth.type api_key and no transport.headers sends Authorization: Bearer ${%s}; declare %s in auth.env or set transport.headers", want, want)
	}
	return nil
}

func envPrompt(field string, pm map[string]any) (EnvPrompt, error) {
	ep := EnvPrompt{Required: true, Secret: true}
	var err error
	if ep.Name, err = text(field+".name", pm["name"], 128); err != nil {
		return ep, err
	}
	if !envNameRE.MatchString(ep.Name) {
		return ep, fail(field+".name", "%s.name: want a variable name such as API_KEY (letters, digits, _), got %s", field, show(pm["name"]))
	}
	if ep.Prompt, err = text(field+".prompt", pm["prompt"], 512); err != nil {
		return ep, err
	}
	ep.Prompt = oneLine(ep.Prompt)
	if ep.Prompt == "" {
		ep.Prompt = ep.Name
	}
	if ep.Required, err = boolean(field+".required", pm["required"], true); err != nil {
		return ep, err
	}
	if ep.Secret, err = boolean(field+".secret", pm["secret"], true); err != nil {
		return ep, err
	}
	if ep.Default, err = text(field+".default", pm["default"], MaxTextLen); err != nil {
		return ep, err
	}
	if strings.ContainsAny(ep.Default, "\r\n") {
		return ep, fail(field+".default", "%s.default: spans lines; a value in .env is one line", field)
	}
	return ep, nil
}

func (p *manifestParser) tools(m *Manifest) error {
	tv, set := p.top["tools"]
	if !set || tv == nil {
		return nil
	}
	tm, ok := tv.(map[string]any)
	if !ok {
		return fail("tools", "tools: want a mapping with default_enabled or default_excluded, got %s", fields.Kind(tv))
	}
	p.noteUnknown("tools.", tm, toolsKeys)
	var err error
	if m.Tools.DefaultEnabled, err = textList("tools.default_enabled", tm["default_enabled"], MaxToolNames, 256); err != nil {
		return err
	}
	if m.Tools.DefaultExcluded, err = textList("tools.default_excluded", tm["default_excluded"], MaxToolNames, 256); err != nil {
		return err
	}
	if len(m.Tools.DefaultEnabled) > 0 && len(m.Tools.DefaultExcluded) > 0 {
		return fail("tools", "tools: default_enabled and default_excluded are mutually exclusive; keep one of them")
	}
	for _, l := range [][]string{m.Tools.DefaultEnabled, m.Tools.DefaultExcluded} {
		for _, n := range l {
			if strings.TrimSpace(n) == "" {
				return fail("tools", "tools: a tool name is empty; remove it")
			}
		}
	}
	return nil
}

func (p *manifestParser) suggest(m *Manifest) error {
	sv, set := p.top["suggest"]
	if !set || sv == nil {
		return nil
	}
	sm, ok := sv.(map[string]any)
	if !ok {
		return fail("suggest", "suggest: want a mapping with keywords or hosts, got %s", fields.Kind(sv))
	}
	p.noteUnknown("suggest.", sm, suggestKeys)
	kw, err := textList("suggest.keywords", sm["keywords"], MaxListLen, 128)
	if err != nil {
		return err
	}
	hosts, err := textList("suggest.hosts", sm["hosts"], MaxListLen, 256)
	if err != nil {
		return err
	}
	for _, k := range kw {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			m.Suggest.Keywords = append(m.Suggest.Keywords, k)
		}
	}
	for _, h := range hosts {
		if h = strings.TrimLeft(strings.ToLower(strings.TrimSpace(h)), "."); h != "" {
			m.Suggest.Hosts = append(m.Suggest.Hosts, h)
		}
	}
	if len(m.Suggest.Keywords) == 0 && len(m.Suggest.Hosts) == 0 {
		return fail("suggest", "suggest: needs at least one keyword or host; add one or remove suggest")
	}
	return nil
}

func (p *manifestParser) install(m *Manifest) error {
	iv, set := p.top["install"]
	if !set || iv == nil {
		return nil
	}
	im, ok := iv.(map[string]any)
	if !ok {
		return fail("install", "install: want a mapping with type git, url and ref, got %s", fields.Kind(iv))
	}
	p.noteUnknown("install.", im, installKeys)
	in := &Install{}
	var err error
	if in.Type, err = text("install.type", im["type"], 16); err != nil {
		return err
	}
	if in.Type == "" {
		in.Type = "git"
	}
	if in.Type != "git" {
		return fail("install.type", "install.type: only git is supported, got %s", show(im["type"]))
	}
	if in.URL, err = text("install.url", im["url"], MaxTextLen); err != nil {
		return err
	}
	if !gitURL(in.URL) {
		return fail("install.url", "install.url: want a git repository URL (https://, ssh://, git://, file:// or user@host:path), got %s", show(im["url"]))
	}
	if in.Ref, err = text("install.ref", im["ref"], 255); err != nil {
		return err
	}
	if !fullSHARE.MatchString(in.Ref) {
		return fail("install.ref", "install.ref: want the full 40-hex commit SHA to check out (lower-case), got %s", show(im["ref"]))
	}
	if in.Bootstrap, err = textList("install.bootstrap", im["bootstrap"], MaxListLen, MaxTextLen); err != nil {
		return err
	}
	for i, c := range in.Bootstrap {
		if strings.TrimSpace(c) == "" {
			return fail("install.bootstrap", "install.bootstrap[%d]: the command is empty; remove it", i)
		}
	}
	m.Install = in
	return nil
}

func (p *manifestParser) sandbox(m *Manifest) error {
	sv, set := p.top["sandbox"]
	if !set || sv == nil {
		return nil
	}
	sm, ok := sv.(map[string]any)
	if !ok {
		return fail("sandbox", "sandbox: want a mapping (writable, deny_read, network, limits, enforce), got %s", fields.Kind(sv))
	}
	if m.Transport.Type != "stdio" {
		return fail("sandbox", "sandbox: confines a local (stdio) server; an http server runs elsewhere; remove sandbox")
	}
	if _, err := parseSandbox(sm, "", checkEnv); err != nil {
		msg := oneLine(showRefsQuoted(err.Error()))
		if k := configKeyRE.FindStringSubmatch(msg); k != nil {
			return fail(k[1], "%s: %s", k[1], clip(msg[len(k[0]):], 300))
		}
		return fail("sandbox", "sandbox: %s", clip(msg, 300))
	}
	m.Sandbox = sm
	return nil
}

func (p *manifestParser) plugin(m *Manifest) error {
	pv, set := p.top["plugin"]
	if !set || pv == nil {
		return nil
	}
	pm, ok := pv.(map[string]any)
	if !ok {
		return fail("plugin", "plugin: want a mapping with kind, name and path, got %s", fields.Kind(pv))
	}
	p.noteUnknown("plugin.", pm, pluginKeys)
	pl := &Plugin{}
	var err error
	if pl.Kind, err = text("plugin.kind", pm["kind"], 16); err != nil {
		return err
	}
	if pl.Kind != "transport" && pl.Kind != "auth" {
		return fail("plugin.kind", "plugin.kind: want transport or auth, got %s", show(pm["kind"]))
	}
	if pl.Name, err = text("plugin.name", pm["name"], MaxNameLen); err != nil {
		return err
	}
	if !nameRE.MatchString(pl.Name) {
		return fail("plugin.name", "plugin.name: want a plugin name of letters, digits, - and _, got %s", show(pm["name"]))
	}
	if pl.Path, err = text("plugin.path", pm["path"], 1024); err != nil {
		return err
	}
	if !filepath.IsLocal(pl.Path) || strings.Contains(pl.Path, "\\") || strings.Contains(pl.Path, "${") {
		return fail("plugin.path", "plugin.path: want a path inside the install folder, relative and without .., got %s", show(pm["path"]))
	}
	pl.Path = filepath.Clean(pl.Path)
	if want := "hermes-" + pl.Kind + "-" + pl.Name; filepath.Base(pl.Path) != want {
		return fail("plugin.path", "plugin.path: the binary must be named %s, got %s", want, show(filepath.Base(pl.Path)))
	}
	if pl.SHA256, err = text("plugin.sha256", pm["sha256"], 64); err != nil {
		return err
	}
	if pl.SHA256 != "" && !sha256RE.MatchString(pl.SHA256) {
		return fail("plugin.sha256", "plugin.sha256: want the 64 hex digits of the binary's sha256, got %s", show(pm["sha256"]))
	}
	pl.SHA256 = strings.ToLower(pl.SHA256)
	if m.Install == nil {
		return fail("plugin", "plugin: the plugin binary comes from the install folder, so the manifest needs an install block")
	}
	if pl.Kind == "auth" && m.Auth.Type == "oauth" {
		return fail("plugin.kind", "plugin.kind: an auth plugin replaces auth.type oauth; set auth.type none or api_key")
	}
	m.Plugin = pl
	return nil
}

// checkRefs checks every ${VAR} the server entry will carry: only
// ${INSTALL_DIR} (with an install block), ${HOME} and the auth.env names
// may be referenced, so a manifest can never pull another of the user's
// variables (a key of another service) into its server.
func checkRefs(m *Manifest) error {
	declared := map[string]bool{homeVar: true}
	for _, e := range m.Auth.Env {
		declared[e.Name] = true
	}
	check := func(field, s string) error {
		names, stray := refs(s)
		if stray {
			return fail(field, "%s: write the install folder as %s exactly", field, installDirRef)
		}
		for _, n := range names {
			switch {
			case n == "INSTALL_DIR":
				if m.Install == nil {
					return fail(field, "manifest references %s but has no install block", installDirRef)
				}
				if m.Transport.Type != "stdio" {
					return fail(field, "%s: %s is only for stdio servers", field, installDirRef)
				}
			case !declared[n]:
				return fail(field, "%s: ${%s} is not declared in auth.env; declare it there (the installer asks for it) or remove it", field, clip(n, 64))
			}
		}
		return nil
	}
	for _, f := range refFields(m) {
		if err := check(f.field, f.value); err != nil {
			return err
		}
	}
	return nil
}

type fieldValue struct{ field, value string }

// refFields lists the strings of a manifest that reach the server entry,
// where ${VAR}s are resolved.
func refFields(m *Manifest) []fieldValue {
	t := m.Transport
	out := []fieldValue{{"transport.command", t.Command}, {"transport.url", t.URL}}
	for i, a := range t.Args {
		out = append(out, fieldValue{fmt.Sprintf("transport.args[%d]", i), a})
	}
	for _, k := range keysOf(t.Env) {
		out = append(out, fieldValue{"transport.env." + k, t.Env[k]})
	}
	for _, k := range keysOf(t.Headers) {
		out = append(out, fieldValue{"transport.headers." + k, t.Headers[k]})
	}
	var walk func(field string, v any)
	walk = func(field string, v any) {
		switch x := v.(type) {
		case string:
			out = append(out, fieldValue{field, x})
		case []any:
			for i, y := range x {
				walk(fmt.Sprintf("%s[%d]", field, i), y)
			}
		case map[string]any:
			for _, k := range keysOf(x) {
				walk(field+"."+k, x[k])
			}
		}
	}
	if m.Sandbox != nil {
		walk("sandbox", m.Sandbox)
	}
	return out
}

// refs returns the variable names s references (as config interpolation
// reads them), and whether an INSTALL_DIR reference is written in another
// form than ${INSTALL_DIR} (which would be resolved from the environment
// instead of substituted).
func refs(s string) (names []string, stray bool) {
	record := func(s string) []string {
		var got []string
		config.Interpolate(s, func(n string) (string, bool) {
			if !slices.Contains(got, n) {
				got = append(got, n)
			}
			return "", false
		})
		return got
	}
	names = record(s)
	if slices.Contains(names, "INSTALL_DIR") {
		stray = slices.Contains(record(substituteInstallDir(s, "")), "INSTALL_DIR")
	}
	return names, stray
}

// substituteInstallDir replaces each ${INSTALL_DIR} of s with dir, leaving
// the escape $${...} alone. dir is escaped so that config interpolation
// reads it back as written.
func substituteInstallDir(s, dir string) string {
	if !strings.Contains(s, installDirRef) {
		return s
	}
	dir = strings.ReplaceAll(dir, "${", "$${")
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			b.WriteString("$${")
			i += 3
		case strings.HasPrefix(s[i:], installDirRef):
			b.WriteString(dir)
			i += len(installDirRef)
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}

// checkEnv is the environment a manifest's sandbox is checked with when
// the manifest is read: whose home "~" stands for does not change whether
// the block is valid, so reading a manifest reads no environment.
func checkEnv(k string) (string, bool) {
	if k == "HOME" {
		return "/home", true
	}
	return "", false
}

// parseSandbox validates a sandbox block through config.ParseSandbox, with
// "~" as $HOME of env (the run's environment; nil is the process's). The
// ${VAR}s of its strings are resolved at load time, so for the check each
// is replaced by an absolute stand-in (installDir for ${INSTALL_DIR} when
// given). Describe's lines then show the references again.
func parseSandbox(sm map[string]any, installDir string, env func(string) (string, bool)) (*config.SandboxSettings, error) {
	const open, close, openAbs = "\x03", "\x04", "/\x01"
	var sub func(v any) any
	sub = func(v any) any {
		switch x := v.(type) {
		case string:
			if installDir != "" {
				x = substituteInstallDir(x, installDir)
			}
			return replaceRefs(x, func(name string, atStart bool) string {
				if atStart {
					return openAbs + name + close
				}
				return open + name + close
			})
		case []any:
			out := make([]any, len(x))
			for i, y := range x {
				out[i] = sub(y)
			}
			return out
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, y := range x {
				out[k] = sub(y)
			}
			return out
		}
		return v
	}
	return config.ParseSandbox(sub(sm).(map[string]any), env)
}

// showRefs undoes parseSandbox's stand-ins in a line of Describe.
func showRefs(line string) string {
	if !strings.ContainsAny(line, "\x01\x03") {
		return line
	}
	r := strings.NewReplacer("/\x01", "${", "\x03", "${", "\x04", "}")
	return r.Replace(line)
}

// showRefsQuoted undoes parseSandbox's stand-ins in a message that quoted
// them (%q writes the bytes as \x01, \x03, \x04).
func showRefsQuoted(msg string) string {
	return strings.NewReplacer(`/\x01`, "${", `\x03`, "${", `\x04`, "}").Replace(showRefs(msg))
}

// replaceRefs replaces every ${...} reference of s (as config.Interpolate
// reads them; $${ is an escape) with f(name, at the start of s).
func replaceRefs(s string, f func(name string, atStart bool) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			b.WriteString("$${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s[i:])
			break
		}
		body := strings.TrimSpace(s[i+2 : i+2+end])
		if k := strings.Index(body, ":-"); k >= 0 {
			body = strings.TrimSpace(body[:k])
		}
		body = strings.TrimSpace(strings.TrimPrefix(body, "env:"))
		if body == "" {
			b.WriteString(s[i : i+2+end+1])
		} else {
			b.WriteString(f(body, i == 0))
		}
		i += 2 + end + 1
	}
	return b.String()
}

// text reads a single string value (absent: ""). Numbers and booleans are
// taken as their text, as the original str()-ed them.
func text(field string, v any, max int) (string, error) {
	s, ferr := fields.Text(field, v)
	if ferr != nil {
		if _, num := v.(float64); num {
			return "", fail(field, "%s: want text, got %s", field, show(v))
		}
		return "", fail(field, "%s: want text, got %s", field, fields.Kind(v))
	}
	if err := checkText(field, s, max); err != nil {
		return "", err
	}
	return s, nil
}

func checkText(field, s string, max int) error {
	switch {
	case len(s) > max:
		return fail(field, "%s: %d bytes, over the limit of %d", field, len(s), max)
	case !utf8.ValidString(s):
		return fail(field, "%s: not valid UTF-8 text", field)
	case strings.IndexByte(s, 0) >= 0:
		return fail(field, "%s: contains a NUL byte", field)
	}
	return nil
}

// textList reads a list of values.
func textList(field string, v any, maxItems, maxLen int) ([]string, error) {
	if t, ok := v.([]any); ok && len(t) > maxItems {
		return nil, fail(field, "%s: %d entries, over the limit of %d", field, len(t), maxItems)
	}
	l, ferr := fields.TextList(field, v)
	switch {
	case ferr == nil:
	case ferr.Key == field:
		return nil, fail(field, "%s: want %s, got %s", field, ferr.Want, fields.Kind(v))
	case ferr.Got == "nothing":
		return nil, fail(ferr.Key, "%s: empty; remove it or write \"\"", ferr.Key)
	default:
		return nil, fail(ferr.Key, "%s: want %s, got %s", ferr.Key, ferr.Want, ferr.Got)
	}
	for i, s := range l {
		if err := checkText(fmt.Sprintf("%s[%d]", field, i), s, maxLen); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// textMap reads a mapping of names (matching keyRE) to values.
func textMap(field string, v any, keyRE *lazyregexp.Regexp, keyHint string) (map[string]string, error) {
	t, ferr := fields.Mapping(field, v)
	switch {
	case t == nil && ferr == nil:
		return nil, nil
	case ferr == nil:
		if len(t) > MaxListLen {
			return nil, fail(field, "%s: %d entries, over the limit of %d", field, len(t), MaxListLen)
		}
		out := make(map[string]string, len(t))
		for _, k := range keysOf(t) {
			if len(k) > 256 || !keyRE.MatchString(k) {
				return nil, fail(field, "%s: want %s, got %s", field, keyHint, show(k))
			}
			s, err := text(field+"."+k, t[k], MaxTextLen)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	}
	return nil, fail(field, "%s: want a mapping of %s to values, got %s", field, keyHint, fields.Kind(v))
}

func boolean(field string, v any, def bool) (bool, error) {
	b, ferr := fields.Bool(field, v, def)
	if ferr != nil {
		return def, fail(field, "%s: want %s, got %s", field, ferr.Want, show(v))
	}
	return b, nil
}

// httpURL reports whether s is an http(s) URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && !strings.ContainsAny(s, " \t\r\n")
}

// gitURL reports whether s is a repository URL git can clone without
// running anything: no leading "-" (an option), no transport helper
// ("ext::", "fd::").
func gitURL(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || strings.ContainsAny(s, " \t\r\n\\") || strings.Contains(s, "::") {
		return false
	}
	if scpRE.MatchString(s) {
		return true
	}
	u, err := url.Parse(s)
	if err != nil {
		return false
	}
	switch u.Scheme {
	case "https", "http", "ssh", "git":
		return u.Host != "" && strings.TrimPrefix(u.Path, "/") != ""
	case "file":
		return u.Path != "" && u.Path != "/"
	}
	return false
}

// show is a value for a message: quoted and cut when text, its kind
// otherwise.
func show(v any) string {
	switch t := v.(type) {
	case string:
		return strconv.Quote(clip(t, 64))
	case nil:
		return "nothing"
	case float64:
		f := strconv.FormatFloat(t, 'g', -1, 64)
		if !strings.ContainsAny(f, ".eIN") {
			f += ".0"
		}
		return f
	case bool, uint64, int64, int:
		return fmt.Sprint(t)
	}
	return fields.Kind(v)
}

// clip cuts s to at most n bytes (on a rune boundary), marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func keysOf[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// SandboxIn validates the manifest's sandbox: block as it will apply to
// an install in installDir (${INSTALL_DIR} replaced by it; other ${VAR}s
// by stand-ins, see parseSandbox; "~" by $HOME of env, the run's
// environment, nil being the process's); nil when there is none. Pass the
// message of an error from the result's checks through ShowRefs.
func (m *Manifest) SandboxIn(installDir string, env func(string) (string, bool)) (*config.SandboxSettings, error) {
	if m.Sandbox == nil {
		return nil, nil
	}
	s, err := parseSandbox(m.Sandbox, installDir, env)
	if err != nil {
		return nil, errors.New(ShowRefs(err.Error()))
	}
	return s, nil
}

// ShowRefs turns a message about a sandbox SandboxIn returned back into
// one line that shows its ${VAR} references as the manifest wrote them.
func ShowRefs(msg string) string { return oneLine(showRefsQuoted(msg)) }
