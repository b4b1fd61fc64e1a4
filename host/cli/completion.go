package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hermes-agent/hermes/host/catalog"
	"github.com/hermes-agent/hermes/host/config"
	"github.com/hermes-agent/hermes/host/registry"
	"github.com/urfave/cli/v3"
)

// serverArgCommands are the `hermes mcp` commands whose first argument is
// a configured server's name.
var serverArgCommands = map[string]bool{
	"test": true, "call": true, "remove": true, "configure": true, "enable": true, "disable": true,
	"login": true, "logout": true, "reauth": true, "get": true, "uninstall": true,
}

// completionToolsTimeout bounds the connection `hermes mcp call NAME <TAB>`
// makes to list the server's tools.
const completionToolsTimeout = 10 * time.Second

// withCompletion lists `hermes completion bash|zsh|fish` in the help and
// makes TAB complete what each command takes: server names, catalog entry
// names for install, and tool names after `hermes mcp call NAME`.
func (e *env) withCompletion(root *cli.Command) *cli.Command {
	root.ConfigureShellCompletionCommand = func(c *cli.Command) {
		c.Hidden = false
		c.Usage = "print the shell completion script: hermes completion bash|zsh|fish (see --help for how to load it)"
	}
	for _, mcp := range root.Commands {
		if mcp.Name != "mcp" {
			continue
		}
		for _, c := range mcp.Commands {
			switch {
			case serverArgCommands[c.Name]:
				c.ShellComplete = e.completeServer
			case c.Name == "install":
				c.ShellComplete = e.completeCatalog
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
func (e *env) completeServer(ctx context.Context, c *cli.Command) {
	if completingFlag(c) {
		cli.DefaultCompleteWithFlags(ctx, c)
		return
	}
	cfg, err := config.Load(e.home)
	if err != nil {
		return
	}
	switch c.Args().Len() {
	case 0:
		for _, s := range cfg.Servers {
			fmt.Fprintln(e.out, s.Name)
		}
	case 1:
		if c.Name != "call" {
			return
		}
		for _, s := range cfg.Servers {
			if s.Name == c.Args().First() && s.Err == nil && s.Enabled {
				e.completeTools(ctx, s)
			}
		}
	}
}

// completeTools prints the tools of srv the model may call, connecting to
// it within completionToolsTimeout.
func (e *env) completeTools(ctx context.Context, srv *config.Server) {
	ctx, cancel := context.WithTimeout(ctx, completionToolsTimeout)
	defer cancel()
	m := e.newManager([]*config.Server{srv})
	defer m.Detach()
	if err := m.Start(ctx); err != nil || m.Status()[0].State != registry.StateConnected {
		return
	}
	for _, name := range originalNames(m, srv.Name) {
		fmt.Fprintln(e.out, name)
	}
}

// completeCatalog prints the catalog's entry names.
func (e *env) completeCatalog(ctx context.Context, c *cli.Command) {
	if completingFlag(c) {
		cli.DefaultCompleteWithFlags(ctx, c)
		return
	}
	if c.Args().Len() > 0 {
		return
	}
	cat, err := catalog.Load()
	if err != nil {
		return
	}
	for _, entry := range cat.Entries {
		fmt.Fprintln(e.out, entry.Name)
	}
}
