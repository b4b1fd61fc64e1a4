package cli

import (
	"context"
	"errors"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/failure"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/screening"
	"github.com/hermes-agent/hermes/host/session"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/sdk"
	"github.com/urfave/cli/v3"
)

// The one vocabulary of every --json output (docs/JSON.md describes it
// field by field): a server is jsonServer, whatever the command; a failure
// is jsonError, with a stable code. A command adds its own fields beside
// those, never a second name for one of them.

// Connection states: the State of a jsonServer. list and get connect to
// nothing, so they say configured where test and tools say connected or
// failed.
const (
	stateConnected      = "connected"       // a live session (test, tools)
	stateConnecting     = "connecting"      // tools: a connect was still under way
	stateCached         = "cached"          // tools: not started; its tools come from the record of its last connection
	stateFailed         = "failed"          // connecting failed; Error says why
	stateConfigured     = "configured"      // list, get, and the changing commands: enabled and usable as written, not connected
	stateDisabled       = "disabled"        // enabled: false
	stateNeedsAuth      = "needs_auth"      // only 'hermes mcp login <name>' can connect it
	stateNeedsEnv       = "needs_env"       // a ${VAR} it uses is set nowhere (NeedsEnv names them)
	stateRejected       = "rejected"        // the security check refuses the entry; it is never started
	stateInvalid        = "invalid"         // the entry cannot be used as written
	stateMissingCommand = "missing_command" // a stdio server whose executable is not there
	stateNotApproved    = "not_approved"    // a project file's server you have not approved as it is now (or rejected)
)

// Error codes of jsonError: the codes and their meanings are decided in
// host/failure (failure.Reported, failure.ModelReported); these are the
// names the commands use. A failure that came from a plugin keeps the
// plugin's code (sdk.Code*: timeout, auth, login_needed, not_mcp, http,
// ...); sdk.CodeNotFound is a missing executable.
const (
	codeUnknownServer = string(failure.CodeUnknownServer)
	codeConfig        = string(failure.CodeConfig)
	codeSafeMode      = string(failure.CodeSafeMode)
	codeRejected      = string(failure.CodeRejected)
	codeNeedsEnv      = string(failure.CodeNeedsEnv)
	codeNoAnswer      = string(failure.CodeNoAnswer)
	codeUnknownEntry  = string(failure.CodeUnknownEntry)
	codeInstall       = string(failure.CodeInstall)
	codeNotInstalled  = string(failure.CodeNotInstalled)
	codeExists        = string(failure.CodeExists)
	codeDuplicate     = string(failure.CodeDuplicate)
	codeNotApproved   = string(failure.CodeNotApproved)
	codeProjectServer = string(failure.CodeProjectServer)
	codeNoSuchTool    = string(failure.CodeNoSuchTool)
	codeCancelled     = string(failure.CodeCanceled)
	codeOther         = string(failure.CodeOther)
)

// jsonStates are all the connection states, as docs/JSON.md lists them;
// jsonCodes all the error codes (the host's, the sdk's and a model
// endpoint's), as host/failure decides them.
var (
	jsonStates = []string{stateConnected, stateConnecting, stateCached, stateFailed, stateConfigured, stateDisabled,
		stateNeedsAuth, stateNeedsEnv, stateRejected, stateInvalid, stateMissingCommand, stateNotApproved}
	jsonCodes = func() []string {
		var codes []string
		for _, m := range append(failure.Reported(), failure.ModelReported()...) {
			codes = append(codes, string(m.Code))
		}
		return codes
	}()
)

// jsonError is a failure: a stable code to branch on and the one-line
// message a person reads (secrets redacted, as on stderr).
type jsonError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// jsonToolSelection is a server's tools filter as config.yaml has it:
// both lists empty means every tool.
type jsonToolSelection struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// jsonServer is one configured server, in every command that prints one.
// Command, Args and URL are as written in config.yaml: a ${VAR} stays a
// reference, so a secret resolved from it is never printed; a URL's query
// secrets are redacted.
type jsonServer struct {
	Name      string   `json:"name"`
	Enabled   bool     `json:"enabled"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	// Auth is the auth: method (oauth, exec, header, a plugin's name).
	Auth  string            `json:"auth,omitempty"`
	Tools jsonToolSelection `json:"tools"`
	State string            `json:"state"`
	// NeedsEnv names the ${VAR}s set nowhere (state needs_env).
	NeedsEnv []string   `json:"needs_env,omitempty"`
	Error    *jsonError `json:"error,omitempty"`
	// ToolsEnabled is set by 'hermes mcp list --check': how many tools
	// the model sees of a server that connected.
	ToolsEnabled *int `json:"tools_enabled,omitempty"`
	// Cache is set by 'hermes mcp list' for a server the store of what
	// servers offered has a record of; absent: never connected.
	Cache *jsonCache `json:"cache,omitempty"`
	// Project is set for a server a project file declares.
	Project *jsonProject `json:"project,omitempty"`
}

// jsonProject says which project file declared a server and what the
// person decided about it.
type jsonProject struct {
	// File is the project file; Root the project's folder.
	File string `json:"file"`
	Root string `json:"root"`
	// Approval is pending, approved or rejected, for the entry as it is
	// now (Digest).
	Approval string `json:"approval"`
	Digest   string `json:"digest"`
	// Overrides is set when it replaces a config.yaml entry of its name.
	Overrides bool `json:"overrides,omitempty"`
	// Sandboxed is set for a local server under the project sandbox.
	Sandboxed bool `json:"sandboxed"`
	// Reads are the ${VAR}s the entry reads from the environment and .env.
	Reads []string `json:"reads,omitempty"`
	// Ignored are the keys of the file hermes does not take from a project.
	Ignored []string `json:"ignored,omitempty"`
}

// projectJSON is s's project origin; nil for a config.yaml entry.
func projectJSON(s *config.Server) *jsonProject {
	if !s.FromProject() {
		return nil
	}
	o := s.Origin
	return &jsonProject{File: o.File, Root: o.Project, Approval: o.Approval, Digest: o.Digest,
		Overrides: o.Overrides, Sandboxed: s.Launch().Sandbox != nil, Reads: o.Reads, Ignored: o.Ignored}
}

// jsonCache is what the store of what servers offered holds for a server.
type jsonCache struct {
	// State is fresh (its tools are registered from it without starting
	// the server), stale (made with other connection settings) or
	// unusable (damaged, oversized or foreign-owned: rebuilt at the next
	// connection).
	State string `json:"state"`
	// Tools counts the tools it lists; FetchedAt is when (RFC 3339).
	Tools     int    `json:"tools_listed,omitempty"`
	FetchedAt string `json:"fetched_at,omitempty"`
}

// jsonFailure is what a command given --json prints on stdout when it
// fails (beside its one line on stderr and its exit code): Name is the
// server it was about, when there is one.
type jsonFailure struct {
	Name  string     `json:"name,omitempty"`
	Error *jsonError `json:"error"`
}

// jsonRemoved is what remove and uninstall print.
type jsonRemoved struct {
	Name    string `json:"name"`
	Removed bool   `json:"removed"`
	// remove: whether the auth plugin revoked the tokens at the
	// authorization server, and whether credential files were deleted.
	TokensRevoked bool `json:"tokens_revoked,omitempty"`
	TokensDeleted bool `json:"tokens_deleted,omitempty"`
	// uninstall: whether the install folder was deleted.
	InstallDirDeleted bool     `json:"install_dir_deleted,omitempty"`
	Warnings          []string `json:"warnings,omitempty"`
}

// jsonChanged is what enable, disable and configure print: the server as
// it is now, and whether the command changed config.yaml.
type jsonChanged struct {
	jsonServer
	Changed bool `json:"changed"`
}

// codedError gives err a jsonError code; it unwraps to err, so the exit
// code and the stderr line stay err's.
type codedError struct {
	code string
	err  error
}

func (c *codedError) Error() string { return c.err.Error() }
func (c *codedError) Unwrap() error { return c.err }

// withCode tags err with a jsonError code (nil stays nil).
func withCode(code string, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// errorCode is the jsonError code of err: the one withCode gave it, else
// the sdk code of a plugin's error it wraps, else codeOther.
func errorCode(err error) string {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	var re *screening.RejectedError
	if errors.As(err, &re) {
		return codeRejected
	}
	var se *session.ConnectError
	if errors.As(err, &se) && se.Code() != "" {
		return se.Code()
	}
	var pe *probeError
	if errors.As(err, &pe) && pe.code != "" {
		return pe.code
	}
	if c := sdk.ErrorCode(err); c != "" {
		return c
	}
	var na *registry.NoAnswerError
	if errors.As(err, &na) {
		return codeNoAnswer
	}
	return codeOther
}

// jsonOutput is a command's --json flag and what it printed.
type jsonOutput struct {
	e       *env
	on      bool
	printed bool
}

func (j *jsonOutput) flag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: usage, Destination: &j.on}
}

// write prints v as the command's JSON output.
func (j *jsonOutput) write(v any) {
	j.printed = true
	writeJSON(j.e, v)
}

// action wraps a command's action: with --json, a failure the action did
// not print itself is printed as a jsonFailure on stdout too. Usage errors
// stay one line on stderr only.
func (j *jsonOutput) action(f cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, c *cli.Command) error {
		err := f(ctx, c)
		if err == nil || !j.on || j.printed {
			return err
		}
		var ee *exitError
		if !errors.As(err, &ee) || ee.code == ExitUsage || ee.msg == "" {
			return err
		}
		code := errorCode(err)
		if ee.code > 128 {
			code = codeCancelled // interrupted by a signal
		}
		fail := jsonFailure{Error: &jsonError{Code: code, Message: ee.msg}}
		if c.Args().Len() >= 1 {
			// The server: every command that takes one names it first.
			fail.Name = c.Args().First()
		}
		j.write(fail)
		return err
	}
}

// serverJSON describes a configured server without connecting to it: its
// state is configured, or why it cannot be used (rejected wins over
// disabled and needs_env: such an entry must not be turned on as it is).
func serverJSON(s *config.Server) jsonServer {
	le := describeServer(s)
	js := jsonServer{
		Name: le.Name, Enabled: le.Enabled, Transport: le.Transport,
		Command: le.Command, Args: le.Args, URL: toolview.Redact(le.URL), Auth: le.Auth,
		Tools:    toolSelection(s),
		NeedsEnv: le.NeedsVars,
	}
	switch le.Status {
	case "disabled":
		js.State = stateDisabled
	case "needs_vars":
		js.State = stateNeedsEnv
		js.Error = &jsonError{Code: codeNeedsEnv, Message: le.Error}
		if le.Error == "" {
			js.Error.Message = "needs " + joinVars(le.NeedsVars)
		}
	case "invalid":
		js.State = stateInvalid
		js.Error = &jsonError{Code: codeConfig, Message: le.Error}
	case "missing_command":
		js.State = stateMissingCommand
		js.Error = &jsonError{Code: sdk.CodeNotFound, Message: le.Error}
	case "rejected":
		js.State = stateRejected
		js.Error = &jsonError{Code: codeRejected, Message: le.Error}
	case "not_approved":
		js.State = stateNotApproved
		js.Error = &jsonError{Code: codeNotApproved, Message: le.Error}
	default:
		js.State = stateConfigured
	}
	js.Project = projectJSON(s)
	return js
}

// toolSelection is s's tools filter, both lists present.
func toolSelection(s *config.Server) jsonToolSelection {
	sel := jsonToolSelection{Include: []string{}, Exclude: []string{}}
	if s != nil {
		sel.Include = append(sel.Include, s.Tools.Include...)
		sel.Exclude = append(sel.Exclude, s.Tools.Exclude...)
	}
	return sel
}

// joinVars is "${A}, ${B}".
func joinVars(vars []string) string {
	out := ""
	for i, v := range vars {
		if i > 0 {
			out += ", "
		}
		out += "${" + v + "}"
	}
	return out
}

// connState is the state and error of a server whose connect (or listing)
// failed with err, its configured state first: a server that cannot be
// used as written fails for that reason.
// oauth says the server answered with a challenge that names OAuth.
func connState(static jsonServer, srv *config.Server, code, msg string, oauth bool) (string, *jsonError) {
	switch static.State {
	case stateNeedsEnv, stateInvalid, stateRejected, stateNotApproved:
		// The failure's own message when there is one: it says what to
		// do.
		je := *static.Error
		if msg != "" {
			je.Message = msg
		}
		return static.State, &je
	}
	if code == "" {
		code = codeOther
	}
	je := &jsonError{Code: code, Message: msg}
	switch {
	case code == codeRejected:
		return stateRejected, je
	case code == sdk.CodeLoginNeeded:
		return stateNeedsAuth, je
	case code == sdk.CodeAuth && (srv.Auth != "" || oauth):
		return stateNeedsAuth, je
	case code == sdk.CodeNotFound:
		return stateMissingCommand, je
	}
	return stateFailed, je
}

// registryState maps a registry status onto the vocabulary.
func registryState(st registry.ServerStatus, srv *config.Server) (string, *jsonError) {
	static := jsonServer{State: stateConfigured}
	if srv != nil {
		static = serverJSON(srv)
	}
	switch st.State {
	case registry.StateConnected:
		return stateConnected, nil
	case registry.StateDisabled:
		return stateDisabled, nil
	case registry.StateIdle:
		return stateCached, nil
	case registry.StateConnecting:
		if st.Error == "" {
			return stateConnecting, nil
		}
	}
	code := st.Code
	if st.Rejected {
		code = codeRejected
	}
	if srv == nil {
		srv = &config.Server{}
	}
	return connState(static, srv, code, st.Error, challengeNamesOAuth(st.Code, st.Challenge))
}
