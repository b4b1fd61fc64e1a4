// Package registry owns turning MCP servers' tools into the tools a model
// sees: tool names and their collision rules, per-server include/exclude
// filters, input-schema normalisation, the resource and prompt utility tools,
// and the rendering of tool, resource and prompt results into the JSON
// strings handed back to the model, with secrets redacted from errors.
//
// It also owns the live registry (Manager): parallel discovery of the
// configured servers through sessions, each server's connection state
// machine (reconnect, parking, keepalive, circuit breaker), tool-list
// refreshes after list_changed, server log notifications, and routing of
// model tool calls. The pure parts above stay connection-free; only the
// Manager and its server loops open sessions. The package reads no
// configuration files: it is handed parsed servers.
package registry
