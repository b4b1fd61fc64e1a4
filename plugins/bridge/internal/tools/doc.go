// Package tools holds the ten tools of hermes mcp serve: their MCP
// definitions (name, description, input schema, output schema) and the
// handlers that turn a call's arguments into the result JSON text.
//
// The names, descriptions, parameter defaults, clamps, result JSON and error
// strings are those of the original Python bridge (mcp_serve.py). A result's
// text is byte for byte what the original returned: json.dumps with indent=2
// for results, without indent for the simple error dicts, with Python's
// defaults (ensure_ascii escapes, ", " and ": " separators, insertion
// order, float repr); see pyjson.go. Integer arguments go through the
// original's _coerce_int: a value that int() does not take falls back to the
// default, then the value is clamped.
//
// Unlike the original, a result is also returned as structured content
// matching the tool's output schema, and the error dicts are flagged as
// tool errors (Result.IsError) without structured content, so an MCP client
// that validates structured content against the output schema accepts every
// result.
//
// The package reads and decides through the session store (package store),
// delivers through package send, and takes events from an Events
// implementation the caller provides; it owns no goroutines, files or
// connections of its own. It does not speak MCP: the host's server wraps
// Definitions and Call into the protocol.
package tools
