package failure

// The codes a person or a script reads: every code a command's --json
// output may carry (docs/JSON.md, "Error codes"), each with its meaning,
// decided here once. host/cli's JSON vocabulary reads them from Reported
// and ModelReported; the documentation is checked against them.

// Codes only the host gives, for what a command found before (or instead
// of) connecting.
const (
	// CodeSafeMode: HERMES_SAFE_MODE is set, so no server is loaded.
	CodeSafeMode Code = "safe_mode"
	// CodeRejected: the security check refuses the entry.
	CodeRejected Code = "rejected"
	// CodeNeedsEnv: a ${VAR} of the entry is set nowhere.
	CodeNeedsEnv Code = "needs_env"
	// CodeNoAnswer: the server never answered a listing in time.
	CodeNoAnswer Code = "no_answer"
	// CodeUnknownEntry: no catalog entry of that name.
	CodeUnknownEntry Code = "unknown_entry"
	// CodeInstall: installing a catalog entry failed; nothing was
	// installed.
	CodeInstall Code = "install"
	// CodeNotInstalled: the server was not installed from the catalog.
	CodeNotInstalled Code = "not_installed"
	// CodeExists: a server of that name is configured already.
	CodeExists Code = "exists"
	// CodeDuplicate: another file's server of the same name is imported
	// instead.
	CodeDuplicate Code = "duplicate"
	// CodeNotApproved: a project file's server the person has not
	// approved as it is now.
	CodeNotApproved Code = "not_approved"
	// CodeProjectServer: the server is a project file's, so a command that
	// edits config.yaml cannot change it.
	CodeProjectServer Code = "project_server"
)

// Codes of a failed call to the model endpoint (hermes model test). A
// model endpoint's failure that has a server's meaning keeps that code
// (CodeAuth, CodeTooLarge, CodeTimeout).
const (
	CodeUnknownModel  Code = "unknown_model"  // the endpoint does not serve the model
	CodeNotCompatible Code = "not_compatible" // not an OpenAI-compatible chat-completions endpoint
	CodeUnreachable   Code = "unreachable"    // nothing answered at the base URL
	CodeRateLimited   Code = "rate_limited"   // HTTP 429, still after the retries
	CodeModelServer   Code = "model_server"   // HTTP 5xx, still after the retries
	CodeModelRejected Code = "model_rejected" // any other refusal of the request
	CodeNoModel       Code = "no_model"       // no model was named and none is the default
)

// Meaning is what a reported code means and who gives it.
type Meaning struct {
	Code Code
	// Host and Plugin say who gives the code: the host, a plugin (an
	// sdk.Error code that crossed the process boundary), or both.
	Host, Plugin bool
	// Text is the meaning as the documentation says it, in plain text.
	Text string
}

// From is who gives the code, as the documentation writes it: "host",
// "plugin" or "host, plugin".
func (m Meaning) From() string {
	switch {
	case m.Host && m.Plugin:
		return "host, plugin"
	case m.Plugin:
		return "plugin"
	}
	return "host"
}

// reported is every code a server command's --json output may carry, in
// the order of the documentation: the host's own, then the plugins'.
var reported = []Meaning{
	{CodeUnknownServer, true, false, "no server of that name is configured"},
	{CodeConfig, true, true, "config.yaml cannot be read or written, or the entry is unusable"},
	{CodeSafeMode, true, false, "HERMES_SAFE_MODE is set, so no server is loaded"},
	{CodeRejected, true, false, "the security check refuses the entry"},
	{CodeNeedsEnv, true, false, "a ${VAR} of the entry is set nowhere"},
	{CodeNoAnswer, true, false, "the server never answered a listing (tools/list, ...) in time"},
	{CodeUnknownEntry, true, false, "no catalog entry of that name"},
	{CodeInstall, true, false, "installing a catalog entry failed; nothing was installed"},
	{CodeNotInstalled, true, false, "uninstall: the server was not installed from the catalog"},
	{CodeExists, true, false, "import: a server of that name is configured already (--force replaces it)"},
	{CodeDuplicate, true, false, "import: another file's server of the same name is imported instead"},
	{CodeNotApproved, true, false, "a project file's server you have not approved as it is now (hermes mcp approve <name>)"},
	{CodeProjectServer, true, false, "the server is a project file's: a command that edits config.yaml cannot change it; change the project file, or hermes mcp reject <name>"},
	{CodeNoSuchTool, true, false, "call: the server offers no tool of that name (the message names the nearest and lists the ones it offers)"},
	{CodeCanceled, true, true, "the person declined, hermes was interrupted, or the call was cancelled"},
	{CodeOther, true, true, "anything else; the message says what"},
	{CodeClosed, false, true, "the connection is gone (the server exited, the stream broke, the host is unreachable)"},
	{CodeNotFound, true, true, "the server's executable does not exist (state missing_command)"},
	{CodeAuth, false, true, "the server wants credentials (HTTP 401/403)"},
	{CodeLoginNeeded, false, true, "only an interactive login can give the credentials (state needs_auth)"},
	{CodeNotMCP, false, true, "the endpoint is not an MCP endpoint"},
	{CodeSessionExpired, false, true, "the server no longer knows the session"},
	{CodeHTTP, false, true, "an HTTP status the transport could not handle"},
	{CodeTimeout, false, true, "the server did not answer in time"},
	{CodeGarbage, false, true, "the server wrote something that is not JSON-RPC"},
	{CodeTooLarge, false, true, "a message was over a size limit"},
	{CodeSandbox, false, true, "the sandbox the server asked for cannot be enforced here"},
	{CodeContract, false, true, "hermes and the plugin do not speak the same contract"},
}

// modelReported is every code of a failed call to the model endpoint
// that is not in reported, in the order of the documentation.
var modelReported = []Meaning{
	{CodeUnknownModel, true, false, "the endpoint does not serve the model"},
	{CodeNotCompatible, true, false, "what answered is not an OpenAI-compatible chat-completions endpoint"},
	{CodeUnreachable, true, false, "nothing answered at model.base_url"},
	{CodeRateLimited, true, false, "HTTP 429, still after model.max_retries"},
	{CodeModelServer, true, false, "HTTP 5xx, still after model.max_retries"},
	{CodeModelRejected, true, false, "any other refusal of the request (400, 422, ...)"},
	{CodeNoModel, true, false, "no model was named and model.default is not set"},
}

// Reported returns every code a server command's --json output may carry,
// with its meaning, in the order docs/JSON.md lists them. The caller may
// keep and change the slice.
func Reported() []Meaning { return append([]Meaning(nil), reported...) }

// ModelReported returns the codes only a failed call to the model
// endpoint reports (hermes model test), with their meanings; such a call
// also reports CodeAuth, CodeTooLarge and CodeTimeout of Reported.
func ModelReported() []Meaning { return append([]Meaning(nil), modelReported...) }
