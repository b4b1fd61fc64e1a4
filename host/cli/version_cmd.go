package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/hermes-agent/hermes/host/cli/mcp/servecmd"

	"github.com/hermes-agent/hermes/host/cli/cmdkit"

	"github.com/hermes-agent/hermes/sdk"
	"github.com/hermes-agent/hermes/sdk/pluginhost"
	"github.com/urfave/cli/v3"
)

// buildInfo is what `hermes version` reports.
type buildInfo struct {
	Version string `json:"version"`
	// Commit is the VCS revision the binary was built from, "" when the
	// build did not record one; Modified marks a build from a tree with
	// uncommitted changes.
	Commit   string `json:"commit"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
	// Contracts are the plugin contract versions this hermes speaks, by
	// kind (each kind is versioned on its own), and SDK the sdk's version.
	Contracts map[string]int `json:"plugin_contracts"`
	SDK       string         `json:"sdk"`
}

// buildCommit is the commit `make build` stamps into the binary
// (-ldflags -X), for builds in workspace mode, where the Go toolchain
// records no VCS information.
var buildCommit string

// readBuildInfo reads what the Go toolchain recorded in the binary.
func readBuildInfo() buildInfo {
	b := buildInfo{Version: servecmd.Version(), Go: runtime.Version(), SDK: sdk.Version, Contracts: map[string]int{}}
	for _, k := range []string{sdk.KindTransport, sdk.KindAuth, sdk.KindBridge, sdk.KindModel} {
		b.Contracts[k] = pluginhost.ContractVersion(k)
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Commit = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Commit == "" {
		b.Commit = buildCommit
	}
	return b
}

// String is the one line of `hermes --version`.
func (b buildInfo) String() string {
	commit := b.Commit
	if commit == "" {
		commit = "unknown"
	} else if len(commit) > 12 {
		commit = commit[:12]
	}
	if b.Modified {
		commit += "+changes"
	}
	return fmt.Sprintf("hermes %s (commit %s, %s, sdk %s, plugin contracts transport v%d, auth v%d, bridge v%d, model v%d)", b.Version, commit, b.Go, b.SDK,
		b.Contracts[sdk.KindTransport], b.Contracts[sdk.KindAuth], b.Contracts[sdk.KindBridge], b.Contracts[sdk.KindModel])
}

func printVersion(e *cmdkit.Env, asJSON bool) error {
	b := readBuildInfo()
	if asJSON {
		enc := json.NewEncoder(e.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(b)
	}
	fmt.Fprintln(e.Out, b.String())
	return nil
}

func versionCommand(e *cmdkit.Env) *cli.Command {
	var asJSON bool
	return &cli.Command{
		Name:  "version",
		Usage: "print the version, commit and Go version of this hermes",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print it as JSON", Destination: &asJSON},
		},
		Action: func(ctx context.Context, c *cli.Command) error {
			if c.Args().Len() > 0 {
				return cmdkit.Usagef("usage: hermes version [--json]")
			}
			return printVersion(e, asJSON)
		},
	}
}
