//go:build deps

package deps

import (
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/huh"
	_ "github.com/creack/pty"
	_ "github.com/goccy/go-yaml"
	_ "github.com/gofrs/flock"
	_ "github.com/hashicorp/go-hclog"
	_ "github.com/hashicorp/go-plugin"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/server"
	_ "github.com/pkg/browser"
	_ "github.com/urfave/cli/v3"
	_ "golang.org/x/term"
)
