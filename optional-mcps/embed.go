// Package optionalmcps holds the curated catalog of MCP servers that ships
// inside hermes: one folder per entry, each with its manifest.yaml. Being
// here means the entry was reviewed, and every version it runs is pinned
// exactly (see docs/CATALOG.md). The package only embeds the files;
// package catalog reads and validates them.
package optionalmcps

import (
	"embed"
	"io/fs"
)

//go:embed */manifest.yaml
var files embed.FS

// FS returns the catalog: <name>/manifest.yaml for every entry.
func FS() fs.FS { return files }
