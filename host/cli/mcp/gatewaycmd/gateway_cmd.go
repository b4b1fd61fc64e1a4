package gatewaycmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"
	"github.com/hermes-agent/hermes/host/cli/mcp/servecmd"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/gateway"
	"github.com/hermes-agent/hermes/host/gateway/policy"
	"github.com/hermes-agent/hermes/host/homedir"
	"github.com/hermes-agent/hermes/host/mcpvalue"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// GatewayOptions are what 'hermes mcp gateway' needs: the run and its
// flags.
type GatewayOptions struct {
	Env *cmdkit.Env
	// HTTPAddr is --http: listen on this HOST:PORT.
	HTTPAddr string
	// ConfigFile is --config: the config file instead of
	// $HERMES_HOME/config.yaml.
	ConfigFile string
	// Drain is --drain: how long calls in flight may finish at SIGTERM.
	Drain time.Duration
}

// Root is the command tree of hermes-gateway (what 'hermes mcp gateway'
// runs): the gateway command itself, with hermes's -v, the run's
// composition root built before it.
func Root(e *cmdkit.Env) *cli.Command {
	root := NewCmdGateway(e, nil)
	root.Name = "hermes-gateway"
	root.Writer, root.ErrWriter, root.Reader = e.Out, e.Err, e.In
	root.Flags = append(root.Flags, &cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "mirror logs on stderr", Destination: &e.Verbose})
	root.Before = func(ctx context.Context, _ *cli.Command) (context.Context, error) {
		cmdkit.Setup(e)
		return ctx, nil
	}
	return root
}

// NewCmdGateway builds 'hermes mcp gateway' with its 'check'
// subcommand. Its action fills a GatewayOptions and checks it, then hands
// it to runF when runF is not nil (a test's look at what was parsed), else
// to gatewayRun.
func NewCmdGateway(e *cmdkit.Env, runF func(context.Context, *GatewayOptions) error) *cli.Command {
	opts := &GatewayOptions{Env: e}
	return &cli.Command{
		Name:  "gateway",
		Usage: "serve the config's servers to a team as one MCP endpoint, with identity, policy, limits and audit",
		Description: "Serves the enabled servers of config.yaml (or --config FILE) as one MCP server over streamable HTTP at the\n" +
			"path of gateway.resource. Every request needs a bearer token: a JWT of a gateway.issuers issuer or a\n" +
			"gateway.tokens static token; gateway.policy decides which tools each person sees and calls. SIGTERM stops\n" +
			"accepting and lets calls in flight finish within --drain. See docs/GATEWAY.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "listen on `HOST:PORT` (0.0.0.0:8080 in a container)", Destination: &opts.HTTPAddr},
			&cli.StringFlag{Name: "config", Usage: "read the servers and the gateway: block from `FILE` instead of $HERMES_HOME/config.yaml", Destination: &opts.ConfigFile},
			&cli.DurationFlag{Name: "drain", Value: gateway.DefaultDrain, Usage: "at SIGTERM, let calls in flight finish for up to `DURATION`", Destination: &opts.Drain},
		},
		Commands: []*cli.Command{NewCmdCheck(e, nil), NewCmdLogout(e, nil)},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return cmdkit.Usagef("usage: hermes mcp gateway --http HOST:PORT [--config FILE] [--drain DURATION]")
			}
			if opts.HTTPAddr == "" {
				return cmdkit.Usagef("hermes mcp gateway needs --http HOST:PORT (e.g. --http 0.0.0.0:8080)")
			}
			if _, _, err := net.SplitHostPort(opts.HTTPAddr); err != nil {
				return cmdkit.Usagef("--http %q: want HOST:PORT, e.g. 0.0.0.0:8080", opts.HTTPAddr)
			}
			if opts.Drain <= 0 {
				return cmdkit.Usagef("--drain %s: give a positive duration, e.g. 25s", opts.Drain)
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return gatewayRun(ctx, opts)
		},
	}
}

// load reads the servers and the gateway block of the run's config file.
func load(e *cmdkit.Env, file string) (*config.Config, *config.Gateway, error) {
	f := cmdkit.Factory(e)
	path := file
	if path == "" {
		path = homedir.Dir(e.Home).Config()
	}
	cfg, err := config.LoadFileEnv(path, e.Home, f.ConfigEnv())
	if err != nil {
		return nil, nil, cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	gw, err := config.LoadGatewayFile(path, e.Home, f.ConfigEnv())
	if err != nil {
		return nil, nil, cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	if gw == nil {
		return nil, nil, cmdkit.Failf("%s has no gateway: block; add one (resource, issuers or tokens, policy): see docs/GATEWAY.md", termsafe.Escape(path))
	}
	return cfg, gw, nil
}

// gatewayRun builds the gateway and serves it until SIGTERM or SIGINT.
func gatewayRun(ctx context.Context, opts *GatewayOptions) error {
	e := opts.Env
	cfg, gw, err := load(e, opts.ConfigFile)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.HTTPAddr)
	if err != nil {
		return cmdkit.Failf("listen on %s: %s; pick another port", termsafe.Escape(opts.HTTPAddr), termsafe.Escape(err.Error()))
	}
	defer ln.Close()
	enabled := enabledServers(cfg)
	b, err := gateway.Build(ctx, gateway.Setup{F: cmdkit.Factory(e), Servers: enabled, Block: gw, Stdout: e.Out, Version: servecmd.Version()})
	if err != nil {
		return cmdkit.Failf("hermes mcp gateway: %s", termsafe.Escape(oneLine(err.Error())))
	}
	defer b.Close()
	// The gateway runs until it is told to stop: the first SIGTERM (the
	// orchestrator's) or SIGINT starts the drain; the run's own handling
	// (stop every plugin, exit) is left to a second one.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var stopping atomic.Bool
	e.OnSignal.Store(&cmdkit.SignalHook{Fn: func(os.Signal) bool {
		if stopping.Swap(true) {
			return false
		}
		fmt.Fprintf(e.Err, "hermes mcp gateway: stopping; calls in flight have %s to finish\n", opts.Drain)
		stop()
		return true
	}})
	sweep := time.NewTicker(time.Minute)
	defer sweep.Stop()
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case <-sweep.C:
				b.Registries.Sweep()
			case <-hup:
				reload(ctx, e, opts, b)
			}
		}
	}()
	fmt.Fprintf(e.Err, "hermes mcp gateway: serving %d server(s) at http://%s%s\n", len(enabled), ln.Addr(), b.Path())
	if err := b.Serve(ctx, ln, opts.Drain); err != nil {
		return cmdkit.Failf("hermes mcp gateway: %s", termsafe.Escape(err.Error()))
	}
	return nil
}

// enabledServers are the servers of cfg that are enabled.
func enabledServers(cfg *config.Config) []*config.Server {
	var out []*config.Server
	for _, s := range cfg.Servers {
		if s.Enabled {
			out = append(out, s)
		}
	}
	return out
}

// reload reads the config again at SIGHUP and applies it (servers,
// identity, policy, limits, audit and telemetry); a config that does not
// load or build changes nothing, and says why on one line.
func reload(ctx context.Context, e *cmdkit.Env, opts *GatewayOptions, b *gateway.Built) {
	cfg, gw, err := load(e, opts.ConfigFile)
	if err == nil {
		err = b.Reload(ctx, gateway.Setup{F: cmdkit.Factory(e), Servers: enabledServers(cfg), Block: gw, Stdout: e.Out, Version: servecmd.Version()})
	}
	if err != nil {
		fmt.Fprintf(e.Err, "hermes mcp gateway: reload refused, still serving the config before it: %s\n", termsafe.Escape(oneLine(err.Error())))
		return
	}
	fmt.Fprintf(e.Err, "hermes mcp gateway: reloaded, serving %d server(s)\n", len(enabledServers(cfg)))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// CheckOptions are what 'hermes mcp gateway check' needs.
type CheckOptions struct {
	Env        *cmdkit.Env
	TokenFile  string
	Tool       string
	ConfigFile string
}

// NewCmdCheck builds 'hermes mcp gateway check --token FILE --tool NAME':
// whose token it is, and what the policy decides for them and that tool,
// by which rule and why.
func NewCmdCheck(e *cmdkit.Env, runF func(context.Context, *CheckOptions) error) *cli.Command {
	opts := &CheckOptions{Env: e}
	return &cli.Command{
		Name:  "check",
		Usage: "explain the policy's decision for the person of a token and one tool",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "token", Usage: "read the bearer token from `FILE` (- for stdin)", Destination: &opts.TokenFile},
			&cli.StringFlag{Name: "tool", Usage: "the model-visible tool `NAME` (mcp_<server>_<tool>)", Destination: &opts.Tool},
			&cli.StringFlag{Name: "config", Usage: "read the gateway: block from `FILE` instead of $HERMES_HOME/config.yaml", Destination: &opts.ConfigFile},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 || opts.TokenFile == "" || opts.Tool == "" {
				return cmdkit.Usagef("usage: hermes mcp gateway check --token FILE --tool NAME [--config FILE]")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return checkRun(ctx, opts)
		},
	}
}

// checkRun authenticates the token as the gateway would and prints the
// decision for the tool.
func checkRun(ctx context.Context, opts *CheckOptions) error {
	e := opts.Env
	cfg, gw, err := load(e, opts.ConfigFile)
	if err != nil {
		return err
	}
	raw, err := readToken(e, opts.TokenFile)
	if err != nil {
		return err
	}
	auth, err := gateway.Identity(gw, cmdkit.Factory(e).Lookup)
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(oneLine(err.Error())))
	}
	p, err := auth.AuthenticateToken(ctx, raw)
	if err != nil {
		return cmdkit.Failf("the token is refused: %s", termsafe.Escape(oneLine(err.Error())))
	}
	pol, err := policy.Compile(policy.FromConfig(gw.Policy))
	if err != nil {
		return cmdkit.Failf("gateway.policy: %s", termsafe.Escape(oneLine(err.Error())))
	}
	server, hints := serverOf(cfg, opts.Tool)
	d := pol.Decide(policy.Request{Subject: p.Subject, Groups: p.Groups, Scopes: p.Scopes, Claims: p.Claims,
		Server: server, Tool: opts.Tool, Annotations: hints})
	verdict := "DENY"
	if d.Allow {
		verdict = "ALLOW"
	}
	rule := "none"
	if d.Rule >= 0 {
		rule = fmt.Sprintf("gateway.policy[%d]", d.Rule)
	}
	fmt.Fprintf(e.Out, "%s %s for %s (groups %s, scopes %s)\nrule: %s\nwhy: %s\n", verdict, termsafe.Escape(opts.Tool),
		termsafe.Escape(p.Subject), termsafe.Escape(strings.Join(p.Groups, ",")), termsafe.Escape(strings.Join(p.Scopes, ",")),
		rule, termsafe.Escape(d.Reason))
	return nil
}

// serverOf is the configured server a model-visible tool name belongs to
// (the longest server name that prefixes it), and the hints the tool is
// judged by: MCP's defaults (not read-only, destructive), the strictest,
// since check does not start the server to read its listing.
func serverOf(cfg *config.Config, tool string) (string, policy.Annotations) {
	best := ""
	for _, s := range cfg.Servers {
		if strings.HasPrefix(tool, "mcp_"+s.Name+"_") && len(s.Name) > len(best) {
			best = s.Name
		}
	}
	return best, policy.HintsOf(mcpvalue.Annotations{})
}

// readToken reads a token file (or stdin for "-"), bounded, trimmed.
func readToken(e *cmdkit.Env, file string) (string, error) {
	var b []byte
	var err error
	if file == "-" {
		b, err = readAllLimited(e.In)
	} else {
		var f *os.File
		if f, err = os.Open(file); err == nil {
			b, err = readAllLimited(f)
			f.Close()
		}
	}
	if err != nil {
		return "", cmdkit.Failf("read the token: %s", termsafe.Escape(err.Error()))
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", cmdkit.Failf("the token file %s is empty", termsafe.Escape(file))
	}
	return tok, nil
}

// maxTokenFileBytes bounds a token file.
const maxTokenFileBytes = 64 << 10

func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxTokenFileBytes+1))
	if err == nil && len(b) > maxTokenFileBytes {
		return nil, fmt.Errorf("the token is over %d bytes", maxTokenFileBytes)
	}
	return b, err
}
