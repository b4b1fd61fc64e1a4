package calls

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/login"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/hermes-agent/hermes/host/termsafe"
	"github.com/hermes-agent/hermes/host/toolview"
	"github.com/hermes-agent/hermes/host/ui"
	"github.com/urfave/cli/v3"
)

// TestReport is what 'hermes mcp test --json' prints: the server (its
// state connected, or why not, in Error), and what it offers. Enabled is
// the entry's: a disabled server is tested all the same, and says so.
type TestReport struct {
	cmdkit.JSONServer
	// Target is the transport line: the url, or the command line.
	Target          string `json:"target"`
	LatencyMS       int64  `json:"latency_ms"`
	ServerName      string `json:"server_name,omitempty"`
	ServerVersion   string `json:"server_version,omitempty"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// ProtocolSource is pinned, remembered or negotiated; ProtocolWhy says
	// why the revision is in use.
	ProtocolSource string `json:"protocol_source,omitempty"`
	ProtocolWhy    string `json:"protocol_why,omitempty"`
	// Instructions are the server's instructions for the model (from
	// initialize), cut to instructionsMax runes.
	Instructions string `json:"instructions,omitempty"`
	// AuthHeaders are the auth-looking headers, masked.
	AuthHeaders map[string]string `json:"auth_headers,omitempty"`
	// DiscoveredTools are the tools the server lists.
	DiscoveredTools []ToolInfo `json:"discovered_tools"`
	Resources       *int       `json:"resources,omitempty"`
	Prompts         *int       `json:"prompts,omitempty"`
	UnknownKeys     []string   `json:"unknown_keys,omitempty"`
	Warnings        []string   `json:"warnings,omitempty"`
	// Sandbox is the isolation asked for and what the transport put in
	// force; absent for a server without sandbox:.
	Sandbox *SandboxInfo `json:"sandbox,omitempty"`
	// Drift lists the tools whose definitions changed since they were
	// approved.
	Drift []cmdkit.DriftNote `json:"drift,omitempty"`
	// ApprovalUnreadable says that the approved tools cannot be read (and
	// so every tool is withheld) and what to do.
	ApprovalUnreadable string `json:"approval_unreadable,omitempty"`
	// ResourceTemplates counts the resource templates
	// (resources/templates/list) of a server with resources.
	ResourceTemplates *int `json:"resource_templates,omitempty"`
}

// SandboxInfo is the sandbox part of 'hermes mcp test'.
type SandboxInfo struct {
	// Asked describes the server's sandbox: block, defaults applied.
	Asked []string `json:"asked"`
	// Applied and Gaps are what the transport reported (bounded).
	Applied []string `json:"applied,omitempty"`
	Gaps    []string `json:"gaps,omitempty"`
}

// Bounds of a transport's sandbox report as shown: it is a plugin's text.
const (
	MaxSandboxLines    = 16
	MaxSandboxLineRune = 200
)

// BoundedLines keeps at most maxSandboxLines lines of at most
// maxSandboxLineRune runes each, on one line each.
func BoundedLines(in []string) []string {
	var out []string
	for i, l := range in {
		if i == MaxSandboxLines {
			out = append(out, fmt.Sprintf("(%d more lines not shown)", len(in)-i))
			break
		}
		l = cmdkit.OneLine(l)
		if r := []rune(l); len(r) > MaxSandboxLineRune {
			l = string(r[:MaxSandboxLineRune]) + "…"
		}
		out = append(out, l)
	}
	return out
}

type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Enabled is false when the server's tools.include/exclude filters the
	// tool out: the model never sees it.
	Enabled bool `json:"enabled"`
}

// TestOptions are what 'hermes mcp test NAME' needs: the run, its --json
// output and the server.
type TestOptions struct {
	Env  *cmdkit.Env
	JSON *cmdkit.JSONOutput
	// Name is the server to test.
	Name string
}

// NewCmdTest is 'hermes mcp test NAME'. runF, when not nil, is called with
// the parsed options instead of testRun (the tests' seam).
func NewCmdTest(e *cmdkit.Env, runF func(context.Context, *TestOptions) error) *cli.Command {
	opts := &TestOptions{Env: e, JSON: &cmdkit.JSONOutput{E: e}}
	j := opts.JSON
	return &cli.Command{
		Name:      "test",
		Usage:     "connect to a server and show what it offers",
		ArgsUsage: "<name>",
		Flags:     []cli.Flag{j.Flag("print a JSON report (see docs/JSON.md)")},
		Action: j.Action(func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() != 1 {
				return cmdkit.Usagef("usage: hermes mcp test <name>")
			}
			opts.Name = c.Args().First()
			if runF != nil {
				return runF(ctx, opts)
			}
			return testRun(ctx, opts)
		}),
	}
}

// testRun connects to the server, lists what it offers and prints the
// report; a server that does not connect or answer fails the test.
func testRun(ctx context.Context, opts *TestOptions) error {
	e, j := opts.Env, opts.JSON
	asJSON := j.On
	name := opts.Name
	_, srv, err := cmdkit.LoadServer(e, name)
	if err != nil {
		return err
	}
	rep := TestReport{JSONServer: cmdkit.ServerJSON(srv), Target: cmdkit.TransportLine(srv), DiscoveredTools: []ToolInfo{},
		UnknownKeys: srv.Unknown, Warnings: srv.Warnings, AuthHeaders: MaskedAuth(srv)}
	static := rep.JSONServer
	rep.State, rep.Error = cmdkit.StateConnected, nil
	// fail records why the test failed: the server's state and the
	// error, with its code.
	fail := func(err error) {
		rep.State, rep.Error = cmdkit.ConnState(static, srv, cmdkit.ErrorCode(err), cmdkit.ShownErr(err), login.UsesOAuth(err))
	}
	if !asJSON {
		e.P.Line("Testing '%s'...", name)
		if !srv.Enabled {
			// Testing it is how to decide whether to enable it.
			e.P.Warn("'%s' is disabled: the model does not see it; enable it with 'hermes mcp enable %s'", name, name)
		}
		e.P.Line("Transport: %s", rep.Target)
		e.P.Line("Auth: %s", AuthLine(srv, rep.AuthHeaders))
		for _, k := range srv.Unknown {
			e.P.Warn("unknown key '%s' (kept in config.yaml, not used)", k)
		}
		for _, w := range srv.Warnings {
			e.P.Warn("%s", w)
		}
	}
	if srv.Sandbox != nil {
		rep.Sandbox = &SandboxInfo{Asked: srv.Sandbox.Describe()}
		if !asJSON {
			e.P.Line("Sandbox:")
			for _, l := range rep.Sandbox.Asked {
				e.P.Line("  %s", l)
			}
		}
	}
	start := time.Now()
	s, err := cmdkit.Connect(e, ctx, srv)
	rep.LatencyMS = time.Since(start).Milliseconds()
	if err != nil {
		fail(err)
		if asJSON {
			j.Write(rep)
			return &cmdkit.ExitError{Code: cmdkit.ExitFail}
		}
		e.P.Fail("Connection failed (%dms): %s", rep.LatencyMS, rep.Error.Message)
		if hint := login.OauthHint(srv, err); hint != "" {
			e.P.Info("%s", hint)
		}
		return &cmdkit.ExitError{Code: cmdkit.ExitFail}
	}
	defer s.Detach() // the output is complete: do not wait for the server to stop
	rep.ServerName = s.ServerInfo().Name
	rep.ServerVersion = s.ServerInfo().Version
	rep.ProtocolVersion = s.Protocol.Revision
	rep.ProtocolSource, rep.ProtocolWhy = s.Protocol.Source, s.Protocol.Why
	rep.Instructions = ClipRunes(strings.TrimSpace(s.Instructions()), InstructionsMax)
	if r := s.Sandbox(); r != nil && rep.Sandbox != nil {
		rep.Sandbox.Applied, rep.Sandbox.Gaps = BoundedLines(r.Applied), BoundedLines(r.Gaps)
	}
	caps := s.Capabilities()
	// Every listing is bounded (registry.ListBound) and reported
	// as what failed, like the registry does it.
	var skipped []string // tools the registry skips
	listed := true       // the tools are known (none without the capability)
	if caps.Tools != nil {
		l, err := registry.ListTools(ctx, s, srv)
		if err != nil {
			listed = false
			fail(err)
		} else {
			filter := toolview.Filter{Include: srv.Tools.Include, Exclude: srv.Tools.Exclude}
			tools, dups := toolview.UniqueTools(name, l.Tools)
			skipped = append(append(append(skipped, l.Skipped...), dups...), l.Notes...)
			rep.Warnings = append(rep.Warnings, skipped...)
			for _, t := range tools {
				rep.DiscoveredTools = append(rep.DiscoveredTools, ToolInfo{Name: t.Name, Description: t.Description, Enabled: filter.Allows(t.Name)})
			}
			d, err := registry.RecordOffered(e.F.Offered(), srv, s, tools)
			if err != nil && d.Unreadable == "" {
				rep.Warnings = append(rep.Warnings, "what the server offered was not recorded: "+cmdkit.OneLine(err.Error()))
			}
			rep.Drift, rep.ApprovalUnreadable = cmdkit.DriftNotes(d), cmdkit.ApprovalUnreadable(d)
		}
	}
	// A listing the server refuses is a warning; one it never
	// answers fails the test.
	count := func(n int, err error) *int {
		var na *registry.NoAnswerError
		switch {
		case errors.As(err, &na):
			fail(err)
		case err != nil:
			skipped = append(skipped, cmdkit.ShownErr(err))
			rep.Warnings = append(rep.Warnings, cmdkit.ShownErr(err))
		default:
			return &n
		}
		return nil
	}
	if caps.Resources != nil && rep.Error == nil {
		rep.Resources = count(registry.CountResources(ctx, s, srv))
		rep.ResourceTemplates = count(registry.CountResourceTemplates(ctx, s, srv))
	}
	if caps.Prompts != nil && rep.Error == nil {
		rep.Prompts = count(registry.CountPrompts(ctx, s, srv))
	}
	if asJSON {
		j.Write(rep)
	} else {
		PrintTestReport(e, rep, skipped, listed)
		cmdkit.PrintSampling(e, srv)
	}
	if rep.Error != nil {
		return &cmdkit.ExitError{Code: cmdkit.ExitFail}
	}
	return nil
}

// InstructionsMax bounds the server instructions 'hermes mcp test' shows
// (runes); the model is given them whole by the registry's rules.
const InstructionsMax = 2000

// InstructionsLines bounds the lines of instructions 'hermes mcp test'
// prints on the terminal (a server's whole manual buried the rest of the
// report); --json has them up to instructionsMax.
const InstructionsLines = 6

// PrintTestReport prints rep; listed is false when the tools could not be
// listed (rep.Error says why).
func PrintTestReport(e *cmdkit.Env, rep TestReport, skipped []string, listed bool) {
	e.P.OK("Connected (%dms)", rep.LatencyMS)
	e.P.Line("Server: %s %s", rep.ServerName, rep.ServerVersion)
	e.P.Line("Protocol: %s (%s)", rep.ProtocolVersion, rep.ProtocolWhy)
	if rep.Instructions != "" {
		e.P.Line("Instructions:")
		lines := strings.Split(rep.Instructions, "\n")
		for _, l := range lines[:min(len(lines), InstructionsLines)] {
			e.P.Line("  %s", l)
		}
		if more := len(lines) - InstructionsLines; more > 0 {
			e.P.Line("  … %d more lines (hermes mcp test %s --json shows them all)", more, rep.Name)
		}
	}
	if sb := rep.Sandbox; sb != nil {
		e.P.OK("Sandbox in force:")
		for _, l := range sb.Applied {
			e.P.Line("  %s", l)
		}
		for _, g := range sb.Gaps {
			e.P.Warn("not enforced: %s", g)
		}
	}
	if !listed {
		e.P.Fail("%s", rep.Error.Message)
		return
	}
	enabled := 0
	for _, t := range rep.DiscoveredTools {
		if t.Enabled {
			enabled++
		}
	}
	if enabled == len(rep.DiscoveredTools) {
		e.P.OK("Tools discovered: %d", len(rep.DiscoveredTools))
	} else {
		e.P.OK("Tools discovered: %d (%d enabled by the tools filter)", len(rep.DiscoveredTools), enabled)
	}
	for _, t := range rep.DiscoveredTools {
		desc := ui.Truncate(termsafe.Escape(cmdkit.OneLine(t.Description)), 55, "...")
		if !t.Enabled {
			desc = "(filtered out) " + desc
		}
		e.P.Line("  %-36s %s", t.Name, desc)
	}
	cmdkit.PrintDrift(e, rep.Name, rep.Drift, rep.ApprovalUnreadable)
	for _, w := range skipped {
		e.P.Warn("%s", w)
	}
	var counts []string
	if rep.Resources != nil {
		counts = append(counts, "resources: "+Itoa(*rep.Resources))
	}
	if rep.ResourceTemplates != nil {
		counts = append(counts, "resource templates: "+Itoa(*rep.ResourceTemplates))
	}
	if rep.Prompts != nil {
		counts = append(counts, "prompts: "+Itoa(*rep.Prompts))
	}
	if len(counts) > 0 {
		e.P.Line("%s", strings.Join(counts, ", "))
	}
	if rep.Error != nil {
		e.P.Fail("%s", rep.Error.Message)
	}
}

// MaskedAuth returns srv's auth-looking headers with their secrets masked.
// A ${VAR} reference is no secret and stays as config.yaml writes it: it
// names where the value comes from, which is what a person fixing it
// needs; the value it resolved to follows masked ("Bearer ${WEB_TOKEN}
// (tok-***9876)").
func MaskedAuth(srv *config.Server) map[string]string {
	raw, _ := srv.Written()["headers"].(map[string]any)
	out := map[string]string{}
	for k, v := range srv.Headers {
		lk := strings.ToLower(k)
		if !strings.Contains(lk, "auth") && !strings.Contains(lk, "key") && !strings.Contains(lk, "token") {
			continue
		}
		if written := cmdkit.RawScalar(raw[k]); strings.Contains(written, "${") {
			out[k] = written
			if _, secret, ok := strings.Cut(v, " "); ok && strings.HasPrefix(written, v[:len(v)-len(secret)]) {
				v = secret
			}
			if !strings.Contains(v, "${") && v != "" {
				out[k] += " (" + ui.Mask(v) + ")"
			}
			continue
		}
		if scheme, rest, ok := strings.Cut(v, " "); ok && strings.EqualFold(scheme, "bearer") {
			out[k] = scheme + " " + ui.Mask(rest)
		} else {
			out[k] = ui.Mask(v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// AuthLine is the Auth: line of 'hermes mcp test': the auth: method (an
// exec command as configured, ${VAR}s unresolved), and any auth-looking
// headers, masked.
func AuthLine(srv *config.Server, masked map[string]string) string {
	var parts []string
	switch srv.Auth {
	case "":
	case "oauth":
		parts = append(parts, "OAuth 2.1")
	case "exec":
		if cmd := cmdkit.ShownExecCommand(srv); cmd != "" {
			parts = append(parts, "exec ("+cmd+")")
		} else {
			parts = append(parts, "exec (no exec.command set)")
		}
	default:
		parts = append(parts, srv.Auth+" (plugin hermes-auth-"+srv.Auth+")")
	}
	keys := make([]string, 0, len(masked))
	for k := range masked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+": "+masked[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func Itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
