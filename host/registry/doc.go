// Package registry owns turning MCP servers' tools into the tools a model
// sees: tool names and their collision rules, per-server include/exclude
// filters, input-schema normalisation, the resource and prompt utility tools,
// and the rendering of tool, resource and prompt results into the JSON
// strings handed back to the model, with secrets redacted from errors.
//
// Everything here is pure and connection-free. The package must not do I/O
// other than writing media files (images, audio, embedded blobs) into the
// cache folder a MediaCache is given; it never opens connections, reads
// configuration or talks to MCP servers.
package registry
