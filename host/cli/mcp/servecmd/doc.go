// Package servecmd owns 'hermes mcp serve': hermes's own messaging
// sessions, and optionally the registry's tools, served to other MCP
// clients over stdio or streamable HTTP through the bridge plugin.
package servecmd
