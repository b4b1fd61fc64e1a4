package cli

import (
	"context"
	"embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/cli/mcp/calls"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/urfave/cli/v3"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/internal/lazyregexp"
	"github.com/hermes-agent/hermes/host/registry"
)

// serverArgCommands are the `hermes mcp` commands whose first argument is
// a configured server's name.
var serverArgCommands = map[string]bool{
	"test": true, "call": true, "remove": true, "configure": true, "enable": true, "disable": true,
	"login": true, "logout": true, "reauth": true, "get": true, "uninstall": true, "logs": true,
	"approve": true, "reject": true,
}

// CompletionToolsTimeout bounds how long `hermes mcp call NAME <TAB>` may
// take to start server NAME and list its tools when the store of what
// servers offered has no fresh record of it (a server never connected, or
// connected with other settings); with one, no server starts. Past it
// nothing is offered and the server is stopped: a TAB never hangs the
// shell. The environment variable HERMES_COMPLETION_TIMEOUT (seconds, or a
// Go duration such as 500ms) changes it; 0 never starts a server on TAB.
const CompletionToolsTimeout = 3 * time.Second

// completionTimeoutEnv names the environment variable that overrides
// CompletionToolsTimeout.
const completionTimeoutEnv = "HERMES_COMPLETION_TIMEOUT"

// completionToolRE is the rule for a tool name offered on TAB: 1 to 128
// (the MCP bound on a tool name) letters, digits, "_" and "-", the
// characters a model provider accepts in a function name. A tool named
// otherwise is still callable, but it is not offered: a candidate is one
// word of plain characters that no shell and no terminal acts on.
var completionToolRE = lazyregexp.New(`^[A-Za-z0-9_-]{1,128}$`)

// completionScripts are the scripts `hermes completion SHELL` prints. Each
// treats what hermes prints as data: a candidate is never split into
// words, globbed, expanded or evaluated by the shell.
//
//go:embed completion_scripts/hermes.bash completion_scripts/hermes.zsh completion_scripts/hermes.fish
var completionScripts embed.FS

// completionHelp is the help of `hermes completion`.
const completionHelp = `Print the completion script of a shell. Load it:

  bash (plain bash is enough; in ~/.bashrc):   source <(hermes completion bash)
  zsh  (after compinit; in ~/.zshrc):          source <(hermes completion zsh)
  fish:   hermes completion fish > ~/.config/fish/completions/hermes.fish

TAB then completes commands, flags, server names, catalog entries and, after
'hermes mcp call NAME', the tools of server NAME, read from what it offered at
its last connection; a server never connected is started for that (at most
3 s; HERMES_COMPLETION_TIMEOUT changes it, 0 never starts a server).
Only names of letters, digits, "_" and "-" are offered.`

// withCompletion lists `hermes completion bash|zsh|fish` in the help and
// makes TAB complete what each command takes: server names, catalog entry
// names for install, and tool names after `hermes mcp call NAME`.
func withCompletion(e *cmdkit.Env, root *cli.Command) *cli.Command {
	root.ConfigureShellCompletionCommand = func(c *cli.Command) {
		c.Hidden = false
		c.Usage = "print the shell completion script: hermes completion bash|zsh|fish (see --help for how to load it)"
		c.Description = completionHelp
		var shells []*cli.Command
		for _, sc := range c.Commands {
			script, err := completionScripts.ReadFile("completion_scripts/hermes." + sc.Name)
			if err != nil {
				// urfave/cli's own scripts (pwsh) are not offered: each
				// script hermes prints is its own, tested in its shell.
				continue
			}
			sc.Usage = "print the " + sc.Name + " completion script"
			sc.Action = func(context.Context, *cli.Command) error {
				_, err := e.Out.Write(script)
				return err
			}
			shells = append(shells, sc)
		}
		c.Commands = shells
	}
	for _, mcp := range root.Commands {
		if mcp.Name != "mcp" {
			continue
		}
		for _, c := range mcp.Commands {
			switch {
			case serverArgCommands[c.Name]:
				c.ShellComplete = func(ctx context.Context, c *cli.Command) { completeServer(e, ctx, c) }
			case c.Name == "install":
				c.ShellComplete = func(ctx context.Context, c *cli.Command) { completeCatalog(e, ctx, c) }
			}
		}
	}
	return root
}

// completing reports whether the word being completed is a flag (then
// urfave/cli's default, the flags, is what the user wants).
func completingFlag(c *cli.Command) bool {
	args := c.Args().Slice()
	return len(args) > 0 && strings.HasPrefix(args[len(args)-1], "-")
}

// completeServer prints the configured server names for the first
// argument, and for `call` the server's tools for the second.
func completeServer(e *cmdkit.Env, ctx context.Context, c *cli.Command) {
	if completingFlag(c) {
		cli.DefaultCompleteWithFlags(ctx, c)
		return
	}
	cfg, err := e.F.Config()
	if err != nil {
		return
	}
	switch c.Args().Len() {
	case 0:
		for _, s := range cfg.Servers {
			// A key hermes refuses as a server name is not offered.
			if config.ValidName(s.Name) {
				fmt.Fprintln(e.Out, s.Name)
			}
		}
	case 1:
		if c.Name != "call" {
			return
		}
		for _, s := range cfg.Servers {
			if s.Name == c.Args().First() && s.Err == nil && s.Enabled {
				completeTools(e, ctx, s)
			}
		}
	}
}

// completeTools prints the tools of srv the model may call whose names
// are plain (completionToolRE): from its record in the store of what
// servers offered when that is fresh, else connecting to it within
// completionTimeout.
func completeTools(e *cmdkit.Env, ctx context.Context, srv *config.Server) {
	if names, ok := cmdkit.CachedToolNames(e.F.Offered(), srv); ok {
		for _, name := range names {
			if completionToolRE.MatchString(name) {
				fmt.Fprintln(e.Out, name)
			}
		}
		return
	}
	bound := completionTimeout(cmdkit.Getter(e))
	if bound <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	m := cmdkit.NewManager(e, []*config.Server{srv})
	defer m.Detach()
	if err := m.Start(ctx); err != nil || m.Status()[0].State != registry.StateConnected {
		// Not connected within the bound: end the plugin and its server
		// now, as Ctrl-C would, instead of waiting out their graces with
		// the user's shell waiting on us.
		if sup := cmdkit.RunSupervisor(e); sup != nil {
			sup.Interrupt()
		}
		return
	}
	for _, name := range calls.OriginalNames(m, srv.Name) {
		if completionToolRE.MatchString(name) {
			fmt.Fprintln(e.Out, name)
		}
	}
}

// completionTimeout is CompletionToolsTimeout, or what
// HERMES_COMPLETION_TIMEOUT says (seconds, or a Go duration; a value that
// reads as neither is ignored).
func completionTimeout(getenv func(string) string) time.Duration {
	v := strings.TrimSpace(getenv(completionTimeoutEnv))
	if v == "" {
		return CompletionToolsTimeout
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return d
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f <= 3600 {
		return time.Duration(f * float64(time.Second))
	}
	return CompletionToolsTimeout
}

// completeCatalog prints the catalog's entry names.
func completeCatalog(e *cmdkit.Env, ctx context.Context, c *cli.Command) {
	if completingFlag(c) {
		cli.DefaultCompleteWithFlags(ctx, c)
		return
	}
	if c.Args().Len() > 0 {
		return
	}
	cat, err := catalog.LoadFrom(cmdkit.Getenv(e, catalog.EnvDir))
	if err != nil {
		return
	}
	for _, entry := range cat.Entries {
		if config.ValidName(entry.Name) {
			fmt.Fprintln(e.Out, entry.Name)
		}
	}
}
