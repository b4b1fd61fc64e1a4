// Package registry is the live registry of MCP servers (Manager): parallel
// discovery of the configured servers through sessions, each server's
// connection state machine (reconnect, parking, keepalive, circuit breaker;
// starting a session, one at a time and with backoff, is a
// supervisor.Instance, as for every long-lived plugin of the host),
// tool-list refreshes after list_changed, server log notifications, and
// routing of model tool calls to the right session. Every listing is
// recorded in the store of what servers offered (package offered; hook in
// offered.go), which also holds the approved tool definitions: a tool that
// drifted from them is reported (Manager.Drift) and, with tools.on_change:
// deny, withheld from the model until accepted (Manager.AcceptDrift).
//
// How tools, filters and results look to the model is package toolview's
// job; the Manager only applies it to what its sessions report. The package
// reads no configuration files: it is handed parsed servers.
package registry
