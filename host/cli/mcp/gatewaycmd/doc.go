// Package gatewaycmd owns 'hermes mcp gateway': the config's servers served
// to a team as one MCP endpoint over streamable HTTP (package gateway);
// 'hermes mcp gateway check', which explains one policy decision; and
// 'hermes mcp gateway logout', which removes a person's upstream tokens.
package gatewaycmd
