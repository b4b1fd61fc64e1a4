package cli

import (
	"strings"

	"github.com/urfave/cli/v3"
)

// examples are the Examples blocks of the commands' --help, by the
// command's full name. Each line is a command a person can paste.
var examples = map[string][]string{
	"hermes mcp add": {
		"hermes mcp add github --url https://api.githubcopilot.com/mcp/ --auth oauth",
		"hermes mcp add fs --tools read_file,list_directory --command npx --args -y @modelcontextprotocol/server-filesystem ~/notes",
		"hermes mcp add linear --url https://mcp.linear.app/mcp --header 'Authorization: Bearer ${LINEAR_TOKEN}' --no-probe",
	},
	"hermes mcp add-json": {
		`hermes mcp add-json memory '{"command":"npx","args":["-y","@modelcontextprotocol/server-memory"]}' --yes`,
		`echo '{"type":"http","url":"https://mcp.example.com/mcp"}' | hermes mcp add-json example - --no-probe`,
	},
	"hermes mcp import": {
		"hermes mcp import --dry-run",
		"hermes mcp import --from claude --all --yes",
		"hermes mcp import --from ./.vscode/mcp.json github memory",
	},
	"hermes mcp get":       {"hermes mcp get github", "hermes mcp get github --json"},
	"hermes mcp test":      {"hermes mcp test github", "hermes mcp test github --json"},
	"hermes mcp logs":      {"hermes mcp logs memory", "hermes mcp logs memory -f", "hermes mcp logs memory --lines 200"},
	"hermes mcp tools":     {"hermes mcp tools github", "hermes mcp tools github search_issues", "hermes mcp tools github --json"},
	"hermes mcp call":      {"hermes mcp call fs read_file --arg path=README.md", `hermes mcp call github search_issues --args-json '{"query":"is:open label:bug"}' --json`},
	"hermes mcp remove":    {"hermes mcp remove github", "hermes mcp remove github --yes"},
	"hermes mcp configure": {"hermes mcp configure github", "hermes mcp configure github --include search_issues,get_issue", "hermes mcp configure github --all"},
	"hermes mcp enable":    {"hermes mcp enable github"},
	"hermes mcp disable":   {"hermes mcp disable github"},
	"hermes mcp login":     {"hermes mcp login github", "hermes mcp login github --no-browser", "hermes mcp login github --device"},
	"hermes mcp logout":    {"hermes mcp logout github"},
	"hermes mcp reauth":    {"hermes mcp reauth github", "hermes mcp reauth --all"},
	"hermes mcp install":   {"hermes mcp install filesystem", "hermes mcp install github --tools search_issues,get_issue --yes"},
	"hermes mcp uninstall": {"hermes mcp uninstall filesystem", "hermes mcp uninstall filesystem --yes"},
	"hermes mcp approve":   {"hermes mcp approve docs", "hermes mcp approve --all --yes", "hermes mcp approve browser --no-sandbox"},
	"hermes mcp reject":    {"hermes mcp reject docs"},
	"hermes chat":          {"hermes chat", `hermes chat "which issues are open in hermes-agent/hermes?"`, `echo "summarise README.md" | hermes chat -m gpt-4.1-mini`},
	"hermes mcp serve":     {"hermes mcp serve", "hermes mcp serve --http 127.0.0.1:8765", "claude mcp add hermes -- hermes mcp serve"},
}

// addExamples appends the Examples block of c (full name name) to its
// description.
func addExamples(c *cli.Command, name string) {
	ex, ok := examples[name]
	if !ok {
		return
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(c.Description, "\n"))
	if c.Description != "" {
		b.WriteString("\n\n")
	}
	b.WriteString("Examples:\n")
	for _, l := range ex {
		b.WriteString("  ")
		b.WriteString(l)
		b.WriteString("\n")
	}
	c.Description = strings.TrimRight(b.String(), "\n")
}
