// Package toolview owns how MCP servers' tools look to the model: tool names
// and their collision rules, per-server include/exclude filters, input-schema
// normalisation, the resource and prompt utility tools, and the rendering of
// tool, resource and prompt results into the JSON strings handed back to the
// model, with media saved to a cache folder and secrets redacted from errors.
//
// It is pure code over mcp-go's types. It must not open sessions, start or
// talk to processes, or read configuration files: callers hand it tools,
// results and already parsed settings. Its only side effect is writing media
// files into the folder its MediaCache is given.
package toolview
