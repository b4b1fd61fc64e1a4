// Package importer owns reading the MCP server configurations of other
// clients (Claude Code, Codex, Gemini CLI, Cursor, VS Code) and mapping
// their entries onto Hermes server entries (config.ServerEntry): which files
// each client reads, how its keys translate, and which of its values are
// secrets that belong in $HERMES_HOME/.env rather than in config.yaml.
//
// Everything in those files is untrusted input: files are read up to
// config.MaxConfigBytes, names are turned into valid Hermes names, and
// nothing read is ever put into an error message except names.
//
// The package reads files and returns what it found; it does not write
// config.yaml or .env, connect to servers, screen entries or print
// anything. Callers (the command line) decide what to do with a Server.
package importer
