package servecmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/host/serve"
	"github.com/hermes-agent/hermes/host/termsafe"
)

// BridgeNameRE is what --bridge accepts: the NAME of a plugin binary
// hermes-bridge-NAME, never a path.
var BridgeNameRE = lazyregexp.New(`^[A-Za-z0-9_-]{1,64}$`)

// ServeOptions are what 'hermes mcp serve' needs: the run and its flags.
type ServeOptions struct {
	Env *cmdkit.Env
	// HTTPAddr is --http: serve streamable HTTP on this HOST:PORT; ""
	// serves stdio.
	HTTPAddr string
	// AllowRemote is --allow-remote: --http may listen on a non-loopback
	// address.
	AllowRemote bool
	// Bridge is --bridge: the NAME of the plugin hermes-bridge-NAME.
	Bridge string
}

// NewCmdServe builds 'hermes mcp serve'. Its action fills a ServeOptions
// from the command line and checks it, then hands it to runF when runF is
// not nil (a test's look at what was parsed), else to serveRun.
func NewCmdServe(e *cmdkit.Env, runF func(context.Context, *ServeOptions) error) *cli.Command {
	opts := &ServeOptions{Env: e}
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the agent's messaging conversations to other MCP clients, on stdin/stdout or with --http on loopback",
		Description: "Runs an MCP server whose ten tools (conversations, messages, events, send, channels, approvals) the\n" +
			"hermes-bridge-messaging plugin serves from $HERMES_HOME/state.db. On stdio nothing but protocol is written to\n" +
			"stdout; -v mirrors the log on stderr. With --http HOST:PORT it serves streamable HTTP at /mcp, every request\n" +
			"needing Authorization: Bearer $HERMES_MCP_SERVE_TOKEN (from .env; generated and shown once on first use).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP on `HOST:PORT` (loopback; port 0 picks one) instead of stdio", Destination: &opts.HTTPAddr},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow --http on a non-loopback address (other machines can then reach it)", Destination: &opts.AllowRemote},
			&cli.StringFlag{Name: "bridge", Value: serve.DefaultBridge, Usage: "the bridge plugin to serve: hermes-bridge-`NAME`", Destination: &opts.Bridge},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return cmdkit.Usagef("usage: hermes mcp serve [--http HOST:PORT [--allow-remote]] [-v]")
			}
			if !BridgeNameRE.MatchString(opts.Bridge) {
				return cmdkit.Usagef("--bridge %q: a bridge plugin's name is letters, digits, '_' and '-' (hermes-bridge-NAME)", opts.Bridge)
			}
			if opts.AllowRemote && opts.HTTPAddr == "" {
				return cmdkit.Usagef("--allow-remote only applies to --http; add --http HOST:PORT")
			}
			if runF != nil {
				return runF(ctx, opts)
			}
			return serveRun(ctx, opts)
		},
	}
}

// serveRun serves the bridge plugin opts names, over streamable HTTP
// (--http) or stdio, until ctx ends or the client goes.
func serveRun(ctx context.Context, opts *ServeOptions) error {
	e := opts.Env
	settings, err := config.LoadServe(e.Home, e.F.ConfigEnv())
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	dotenv, err := config.LoadDotEnv(e.Home)
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	var httpOpts serve.HTTPOptions
	if opts.HTTPAddr != "" {
		// Refuse a bad address before anything starts.
		httpOpts = serve.HTTPOptions{Addr: opts.HTTPAddr, AllowRemote: opts.AllowRemote, MaxRequestBytes: int64(settings.MaxRequestBytes), Logger: e.Log.Named("serve")}
		ln, err := serve.Listen(httpOpts)
		if err != nil {
			return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
		}
		defer ln.Close()
		token, created, err := serve.EnsureToken(e.Home)
		if err != nil {
			return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
		}
		httpOpts.Token = token
		b, err := StartBridge(e, ctx, opts.Bridge, settings, dotenv)
		if err != nil {
			return err
		}
		defer b.Close()
		if created {
			// The one time the token is shown: the user needs it for
			// their client. It is never logged.
			fmt.Fprintf(e.Err, "Generated a bearer token for hermes mcp serve and saved it to .env as %s:\n  %s\nClients send it as: Authorization: Bearer <token>\n", serve.TokenVar, token)
		}
		fmt.Fprintf(e.Err, "Serving MCP on %s\n", serve.URL(ln))
		s := serve.NewServer(b.Description(), b, serve.ServerOptions{Version: Version(), CallTimeout: settings.CallTimeout, Logger: e.Log.Named("serve")})
		if err := serve.ServeHTTP(ctx, s, ln, httpOpts); err != nil {
			return cmdkit.Failf("hermes mcp serve: %s", termsafe.Escape(err.Error()))
		}
		return nil
	}
	out, restore := ProtocolOut(e.Out)
	defer restore()
	b, err := StartBridge(e, ctx, opts.Bridge, settings, dotenv)
	if err != nil {
		return err
	}
	defer b.Close()
	s := serve.NewServer(b.Description(), b, serve.ServerOptions{Version: Version(), CallTimeout: settings.CallTimeout, Logger: e.Log.Named("serve")})
	if err := serve.ServeStdio(ctx, s, RawIn(e), out, serve.StdioOptions{MaxRequestBytes: int64(settings.MaxRequestBytes), Drain: settings.CallTimeout, Logger: e.Log.Named("serve")}); err != nil {
		return cmdkit.Failf("hermes mcp serve: %s", termsafe.Escape(err.Error()))
	}
	return nil
}

func StartBridge(e *cmdkit.Env, ctx context.Context, name string, settings *config.ServeSettings, dotenv map[string]string) (*serve.Bridge, error) {
	b, err := serve.StartBridge(ctx, serve.BridgeOptions{
		Supervisor:     cmdkit.RunSupervisor(e),
		Name:           name,
		Home:           e.Home,
		Settings:       settings.Bridges[name],
		Env:            serve.DotEnvLookup(dotenv),
		MaxResultBytes: int(settings.MaxResultBytes),
		Logger:         e.Log,
	})
	if err != nil {
		return nil, cmdkit.Failf("hermes mcp serve: %s", termsafe.Escape(err.Error()))
	}
	return b, nil
}

// RawIn is stdin as it is, for a protocol reader that owns it.
func RawIn(e *cmdkit.Env) io.Reader {
	if e.Input != nil {
		return e.Input.Src
	}
	return e.In
}

// Version is hermes's version as the build recorded it.
func Version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// ProtocolOut returns the writer of the protocol stream. When out is the
// process's stdout, the protocol gets a private copy of it and file
// descriptor 1 is pointed at stderr: whatever else in the process (or a
// library) prints to stdout lands on stderr and cannot corrupt the
// protocol. restore undoes it.
func ProtocolOut(out io.Writer) (io.Writer, func()) {
	if f, ok := out.(*os.File); ok && f == os.Stdout {
		if private, restore, err := DivertStdout(); err == nil {
			return private, restore
		}
	}
	return out, func() {}
}
