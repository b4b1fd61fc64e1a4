// Package gatewaycmd owns 'hermes mcp gateway': the config's servers served
// to a team as one MCP endpoint over streamable HTTP (package gateway), and
// 'hermes mcp gateway check', which explains one policy decision.
package gatewaycmd
