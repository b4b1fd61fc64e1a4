// Package pluginconn is the host side of a transport plugin for an mcp-go
// client: the host's sessions run on it, and a plugin's own tests can drive
// the plugin through it as the host does. It opens a connection through the
// plugin (sdk/pluginhost) and presents it as an mcp-go client transport, so
// that mcp-go's client works unchanged on top of a plugin. Request/response matching happens here,
// once per message; a tools/call result can be decoded here too, once,
// straight from its frame (ResultSink).
package pluginconn
