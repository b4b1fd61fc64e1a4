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

func ServeCommand(e *cmdkit.Env) *cli.Command {
	var (
		httpAddr    string
		allowRemote bool
		bridgeName  string
	)
	return &cli.Command{
		Name:  "serve",
		Usage: "serve the agent's messaging conversations to other MCP clients, on stdin/stdout or with --http on loopback",
		Description: "Runs an MCP server whose ten tools (conversations, messages, events, send, channels, approvals) the\n" +
			"hermes-bridge-messaging plugin serves from $HERMES_HOME/state.db. On stdio nothing but protocol is written to\n" +
			"stdout; -v mirrors the log on stderr. With --http HOST:PORT it serves streamable HTTP at /mcp, every request\n" +
			"needing Authorization: Bearer $HERMES_MCP_SERVE_TOKEN (from .env; generated and shown once on first use).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "http", Usage: "serve streamable HTTP on `HOST:PORT` (loopback; port 0 picks one) instead of stdio", Destination: &httpAddr},
			&cli.BoolFlag{Name: "allow-remote", Usage: "allow --http on a non-loopback address (other machines can then reach it)", Destination: &allowRemote},
			&cli.StringFlag{Name: "bridge", Value: serve.DefaultBridge, Usage: "the bridge plugin to serve: hermes-bridge-`NAME`", Destination: &bridgeName},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return cmdkit.Usagef("usage: hermes mcp serve [--http HOST:PORT [--allow-remote]] [-v]")
			}
			if !BridgeNameRE.MatchString(bridgeName) {
				return cmdkit.Usagef("--bridge %q: a bridge plugin's name is letters, digits, '_' and '-' (hermes-bridge-NAME)", bridgeName)
			}
			if allowRemote && httpAddr == "" {
				return cmdkit.Usagef("--allow-remote only applies to --http; add --http HOST:PORT")
			}
			return RunServe(e, ctx, httpAddr, allowRemote, bridgeName)
		},
	}
}

func RunServe(e *cmdkit.Env, ctx context.Context, httpAddr string, allowRemote bool, bridgeName string) error {
	settings, err := config.LoadServe(e.Home, e.F.ConfigEnv())
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	dotenv, err := config.LoadDotEnv(e.Home)
	if err != nil {
		return cmdkit.Failf("%s", termsafe.Escape(err.Error()))
	}
	var httpOpts serve.HTTPOptions
	if httpAddr != "" {
		// Refuse a bad address before anything starts.
		httpOpts = serve.HTTPOptions{Addr: httpAddr, AllowRemote: allowRemote, MaxRequestBytes: int64(settings.MaxRequestBytes), Logger: e.Log.Named("serve")}
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
		b, err := StartBridge(e, ctx, bridgeName, settings, dotenv)
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
	b, err := StartBridge(e, ctx, bridgeName, settings, dotenv)
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
