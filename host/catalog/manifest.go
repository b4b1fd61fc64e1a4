// Package catalog owns the curated catalog of MCP servers: it reads and
// validates the manifests of optional-mcps/<name>/manifest.yaml (embedded
// in the binary, or the folder $HERMES_OPTIONAL_MCPS names), reports the
// entries it cannot use with their reason, and translates an entry into a
// server entry of config.yaml. It is manifest work only: it installs
// nothing, starts no process, writes no file and never talks to the
// terminal; package install does the installing, transactionally.
package catalog

// ManifestVersion is the manifest schema this hermes understands.
const ManifestVersion = 1

// Manifest is one catalog entry, validated. Field order follows the
// schema (REFERENCE.md §8.1) plus hermes's additions: transport.headers,
// sandbox and plugin.
type Manifest struct {
	// Version is manifest_version (always ManifestVersion once valid).
	Version int
	// Name matches ^[A-Za-z0-9_-]+$ and the entry's folder name.
	Name string
	// Description is one line (non-empty).
	Description string
	// Source is an informational URL, shown before installing.
	Source string
	// Transport says how to reach the server.
	Transport Transport
	// Auth says which credentials the server needs.
	Auth Auth
	// Tools holds the pre-selection of the tool checklist.
	Tools Tools
	// Suggest holds keywords and hosts that hint at this entry.
	Suggest Suggest
	// Install, when set, is a git repository cloned at a pinned commit
	// into $HERMES_HOME/mcp-installs/<name>, then bootstrapped.
	Install *Install
	// Sandbox is the isolation the server runs under by default, as a
	// sandbox: block of config.yaml (nil: none declared).
	Sandbox map[string]any
	// Plugin, when set, is a plugin binary the entry ships in its install
	// folder.
	Plugin *Plugin
	// PostInstall is printed after a successful install.
	PostInstall string
	// Unknown lists the keys this version does not know
	// ("transport.timeout"), sorted. They are ignored; the shipped
	// catalog has none.
	Unknown []string
}

// Transport is the transport: block.
type Transport struct {
	// Type is "stdio" or "http".
	Type string
	// Command and Args start a stdio server; ${INSTALL_DIR} is substituted.
	Command string
	Args    []string
	// Env is static, non-secret environment for a stdio server.
	Env map[string]string
	// URL reaches an http server; Headers are sent with every request
	// (values may reference ${VAR}s that auth.env prompts for).
	URL     string
	Headers map[string]string
	// Version is the informational version pin.
	Version string
	// NoRoots (roots: false) installs the entry with roots: false: the
	// server is offered none of the host's roots and keeps the folders its
	// args name (server-filesystem replaces them with the client's roots).
	NoRoots bool
}

// Auth is the auth: block.
type Auth struct {
	// Type is "none", "api_key" or "oauth".
	Type string
	// Env are the values prompted for at install and saved to .env.
	Env []EnvPrompt
	// Provider names a third-party OAuth provider (informational).
	Provider string
	// Scopes and EnvVar are informational.
	Scopes []string
	EnvVar string
}

// EnvPrompt is one value asked for at install.
type EnvPrompt struct {
	// Name is the variable (^[A-Za-z_][A-Za-z0-9_]*$).
	Name string
	// Prompt is the question (default Name).
	Prompt string
	// Required refuses an empty answer (default true).
	Required bool
	// Secret hides the input (default true).
	Secret bool
	// Default is offered when the user just presses ENTER.
	Default string
}

// Tools is the tools: block.
type Tools struct {
	// DefaultEnabled is the pre-checked set of the checklist.
	DefaultEnabled []string
	// DefaultExcluded are names or globs written to tools.exclude
	// (mutually exclusive with DefaultEnabled).
	DefaultExcluded []string
}

// Suggest is the suggest: block.
type Suggest struct {
	Keywords, Hosts []string
}

// Install is the install: block.
type Install struct {
	// Type is "git".
	Type string
	// URL is the repository; Ref a full 40-hex commit SHA.
	URL, Ref string
	// Bootstrap are shell commands run in the clone, in order.
	Bootstrap []string
}

// Plugin is the plugin: block of an entry that ships its own adapter.
type Plugin struct {
	// Kind is "transport" or "auth"; Name the plugin's name (the binary
	// is hermes-<kind>-<name>).
	Kind, Name string
	// Path is the binary's path inside the install folder.
	Path string
	// SHA256, when set, is the hex sha256 the binary must have after the
	// bootstrap; without it the sha256 found at install is recorded.
	SHA256 string
}
