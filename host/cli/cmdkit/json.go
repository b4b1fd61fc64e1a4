package cmdkit

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
	StateConnected      = "connected"       // a live session (test, tools)
	StateConnecting     = "connecting"      // tools: a connect was still under way
	StateCached         = "cached"          // tools: not started; its tools come from the record of its last connection
	StateFailed         = "failed"          // connecting failed; Error says why
	StateConfigured     = "configured"      // list, get, and the changing commands: enabled and usable as written, not connected
	StateDisabled       = "disabled"        // enabled: false
	StateNeedsAuth      = "needs_auth"      // only 'hermes mcp login <name>' can connect it
	StateNeedsEnv       = "needs_env"       // a ${VAR} it uses is set nowhere (NeedsEnv names them)
	StateRejected       = "rejected"        // the security check refuses the entry; it is never started
	StateInvalid        = "invalid"         // the entry cannot be used as written
	StateMissingCommand = "missing_command" // a stdio server whose executable is not there
	StateNotApproved    = "not_approved"    // a project file's server you have not approved as it is now (or rejected)
)

// Error codes of jsonError: the codes and their meanings are decided in
// host/failure (failure.Reported, failure.ModelReported); these are the
// names the commands use. A failure that came from a plugin keeps the
// plugin's code (sdk.Code*: timeout, auth, login_needed, not_mcp, http,
// ...); sdk.CodeNotFound is a missing executable.
const (
	CodeUnknownServer = string(failure.CodeUnknownServer)
	CodeConfig        = string(failure.CodeConfig)
	CodeSafeMode      = string(failure.CodeSafeMode)
	CodeRejected      = string(failure.CodeRejected)
	CodeNeedsEnv      = string(failure.CodeNeedsEnv)
	CodeNoAnswer      = string(failure.CodeNoAnswer)
	CodeUnknownEntry  = string(failure.CodeUnknownEntry)
	CodeInstall       = string(failure.CodeInstall)
	CodeNotInstalled  = string(failure.CodeNotInstalled)
	CodeExists        = string(failure.CodeExists)
	CodeDuplicate     = string(failure.CodeDuplicate)
	CodeNotApproved   = string(failure.CodeNotApproved)
	CodeProjectServer = string(failure.CodeProjectServer)
	CodeNoSuchTool    = string(failure.CodeNoSuchTool)
	CodeCancelled     = string(failure.CodeCanceled)
	CodeOther         = string(failure.CodeOther)
)

// JSONStates are all the connection states, as docs/JSON.md lists them;
// JSONCodes all the error codes (the host's, the sdk's and a model
// endpoint's), as host/failure decides them.
var (
	JSONStates = []string{StateConnected, StateConnecting, StateCached, StateFailed, StateConfigured, StateDisabled,
		StateNeedsAuth, StateNeedsEnv, StateRejected, StateInvalid, StateMissingCommand, StateNotApproved}
	JSONCodes = func() []string {
		var codes []string
		for _, m := range append(failure.Reported(), failure.ModelReported()...) {
			codes = append(codes, string(m.Code))
		}
		return codes
	}()
)

// JSONError is a failure: a stable code to branch on and the one-line
// Message a person reads (secrets redacted, as on stderr).
type JSONError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// JSONToolSelection is a server's tools filter as config.yaml has it:
// both lists empty means every tool.
type JSONToolSelection struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// JSONServer is one configured server, in every command that prints one.
// Command, Args and URL are as written in config.yaml: a ${VAR} stays a
// reference, so a secret resolved from it is never printed; a URL's query
// secrets are redacted.
type JSONServer struct {
	Name      string   `json:"name"`
	Enabled   bool     `json:"enabled"`
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	// Auth is the auth: method (oauth, exec, header, a plugin's name).
	Auth  string            `json:"auth,omitempty"`
	Tools JSONToolSelection `json:"tools"`
	State string            `json:"state"`
	// NeedsEnv names the ${VAR}s set nowhere (state needs_env).
	NeedsEnv []string   `json:"needs_env,omitempty"`
	Error    *JSONError `json:"error,omitempty"`
	// ToolsEnabled is set by 'hermes mcp list --check': how many tools
	// the model sees of a server that connected.
	ToolsEnabled *int `json:"tools_enabled,omitempty"`
	// Cache is set by 'hermes mcp list' for a server the store of what
	// servers offered has a record of; absent: never connected.
	Cache *JSONCache `json:"cache,omitempty"`
	// Project is set for a server a project file declares.
	Project *JSONProject `json:"project,omitempty"`
}

// JSONProject says which project file declared a server and what the
// person decided about it.
type JSONProject struct {
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

// ProjectJSON is s's project origin; nil for a config.yaml entry.
func ProjectJSON(s *config.Server) *JSONProject {
	if !s.FromProject() {
		return nil
	}
	o := s.Origin
	return &JSONProject{File: o.File, Root: o.Project, Approval: o.Approval, Digest: o.Digest,
		Overrides: o.Overrides, Sandboxed: s.Launch().Sandbox != nil, Reads: o.Reads, Ignored: o.Ignored}
}

// JSONCache is what the store of what servers offered holds for a server.
type JSONCache struct {
	// State is fresh (its tools are registered from it without starting
	// the server), stale (made with other connection settings) or
	// unusable (damaged, oversized or foreign-owned: rebuilt at the next
	// connection).
	State string `json:"state"`
	// Tools counts the tools it lists; FetchedAt is when (RFC 3339).
	Tools     int    `json:"tools_listed,omitempty"`
	FetchedAt string `json:"fetched_at,omitempty"`
}

// JSONFailure is what a command given --json prints on stdout when it
// fails (beside its one line on stderr and its exit code): Name is the
// server it was about, when there is one.
type JSONFailure struct {
	Name  string     `json:"name,omitempty"`
	Error *JSONError `json:"error"`
}

// JSONRemoved is what remove and uninstall print.
type JSONRemoved struct {
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

// JSONChanged is what enable, disable and configure print: the server as
// it is now, and whether the command changed config.yaml.
type JSONChanged struct {
	JSONServer
	Changed bool `json:"changed"`
}

// CodedError gives err a jsonError code; it unwraps to err, so the exit
// Code and the stderr line stay err's.
type CodedError struct {
	code string
	err  error
}

func (c *CodedError) Error() string { return c.err.Error() }
func (c *CodedError) Unwrap() error { return c.err }

// WithCode tags err with a jsonError code (nil stays nil).
func WithCode(code string, err error) error {
	if err == nil {
		return nil
	}
	return &CodedError{code: code, err: err}
}

// ErrorCode is the jsonError code of err: the one withCode gave it, else
// the sdk code of a plugin's error it wraps, else codeOther.
func ErrorCode(err error) string {
	var ce *CodedError
	if errors.As(err, &ce) {
		return ce.code
	}
	var re *screening.RejectedError
	if errors.As(err, &re) {
		return CodeRejected
	}
	var se *session.ConnectError
	if errors.As(err, &se) && se.Code() != "" {
		return se.Code()
	}
	var pe *ProbeError
	if errors.As(err, &pe) && pe.Code != "" {
		return pe.Code
	}
	if c := sdk.ErrorCode(err); c != "" {
		return c
	}
	var na *registry.NoAnswerError
	if errors.As(err, &na) {
		return CodeNoAnswer
	}
	return CodeOther
}

// JSONOutput is a command's --json flag and what it printed.
type JSONOutput struct {
	E       *Env
	On      bool
	printed bool
}

func (j *JSONOutput) Flag(usage string) cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: usage, Destination: &j.On}
}

// Write prints v as the command's JSON output.
func (j *JSONOutput) Write(v any) {
	j.printed = true
	WriteJSON(j.E, v)
}

// Action wraps a command's action: with --json, a failure the action did
// not print itself is printed as a jsonFailure on stdout too. Usage errors
// stay one line on stderr only.
func (j *JSONOutput) Action(f cli.ActionFunc) cli.ActionFunc {
	return func(ctx context.Context, c *cli.Command) error {
		err := f(ctx, c)
		if err == nil || !j.On || j.printed {
			return err
		}
		var ee *ExitError
		if !errors.As(err, &ee) || ee.Code == ExitUsage || ee.Msg == "" {
			return err
		}
		code := ErrorCode(err)
		if ee.Code > 128 {
			code = CodeCancelled // interrupted by a signal
		}
		fail := JSONFailure{Error: &JSONError{Code: code, Message: ee.Msg}}
		if c.Args().Len() >= 1 {
			// The server: every command that takes one names it first.
			fail.Name = c.Args().First()
		}
		j.Write(fail)
		return err
	}
}

// ServerJSON describes a configured server without connecting to it: its
// State is configured, or why it cannot be used (rejected wins over
// disabled and needs_env: such an entry must not be turned on as it is).
func ServerJSON(s *config.Server) JSONServer {
	le := DescribeServer(s)
	js := JSONServer{
		Name: le.Name, Enabled: le.Enabled, Transport: le.Transport,
		Command: le.Command, Args: le.Args, URL: toolview.Redact(le.URL), Auth: le.Auth,
		Tools:    ToolSelection(s),
		NeedsEnv: le.NeedsVars,
	}
	switch le.Status {
	case "disabled":
		js.State = StateDisabled
	case "needs_vars":
		js.State = StateNeedsEnv
		js.Error = &JSONError{Code: CodeNeedsEnv, Message: le.Error}
		if le.Error == "" {
			js.Error.Message = "needs " + JoinVars(le.NeedsVars)
		}
	case "invalid":
		js.State = StateInvalid
		js.Error = &JSONError{Code: CodeConfig, Message: le.Error}
	case "missing_command":
		js.State = StateMissingCommand
		js.Error = &JSONError{Code: sdk.CodeNotFound, Message: le.Error}
	case "rejected":
		js.State = StateRejected
		js.Error = &JSONError{Code: CodeRejected, Message: le.Error}
	case "not_approved":
		js.State = StateNotApproved
		js.Error = &JSONError{Code: CodeNotApproved, Message: le.Error}
	default:
		js.State = StateConfigured
	}
	js.Project = ProjectJSON(s)
	return js
}

// ToolSelection is s's tools filter, both lists present.
func ToolSelection(s *config.Server) JSONToolSelection {
	sel := JSONToolSelection{Include: []string{}, Exclude: []string{}}
	if s != nil {
		sel.Include = append(sel.Include, s.Tools.Include...)
		sel.Exclude = append(sel.Exclude, s.Tools.Exclude...)
	}
	return sel
}

// JoinVars is "${A}, ${B}".
func JoinVars(vars []string) string {
	out := ""
	for i, v := range vars {
		if i > 0 {
			out += ", "
		}
		out += "${" + v + "}"
	}
	return out
}

// ConnState is the state and error of a server whose connect (or listing)
// failed with err, its configured state first: a server that cannot be
// used as written fails for that reason.
// oauth says the server answered with a challenge that names OAuth.
func ConnState(static JSONServer, srv *config.Server, code, msg string, oauth bool) (string, *JSONError) {
	switch static.State {
	case StateNeedsEnv, StateInvalid, StateRejected, StateNotApproved:
		// The failure's own message when there is one: it says what to
		// do.
		je := *static.Error
		if msg != "" {
			je.Message = msg
		}
		return static.State, &je
	}
	if code == "" {
		code = CodeOther
	}
	je := &JSONError{Code: code, Message: msg}
	switch {
	case code == CodeRejected:
		return StateRejected, je
	case code == sdk.CodeLoginNeeded:
		return StateNeedsAuth, je
	case code == sdk.CodeAuth && (srv.Auth != "" || oauth):
		return StateNeedsAuth, je
	case code == sdk.CodeNotFound:
		return StateMissingCommand, je
	}
	return StateFailed, je
}

// RegistryState maps a registry status onto the vocabulary.
func RegistryState(st registry.ServerStatus, srv *config.Server) (string, *JSONError) {
	static := JSONServer{State: StateConfigured}
	if srv != nil {
		static = ServerJSON(srv)
	}
	switch st.State {
	case registry.StateConnected:
		return StateConnected, nil
	case registry.StateDisabled:
		return StateDisabled, nil
	case registry.StateIdle:
		return StateCached, nil
	case registry.StateConnecting:
		if st.Error == "" {
			return StateConnecting, nil
		}
	}
	code := st.Code
	if st.Rejected {
		code = CodeRejected
	}
	if srv == nil {
		srv = &config.Server{}
	}
	return ConnState(static, srv, code, st.Error, ChallengeNamesOAuth(st.Code, st.Challenge))
}
