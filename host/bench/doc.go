// Package bench holds the project's benchmarks of whole paths (a tool call
// through a plugin against the same call made in-process with mcp-go,
// plugin start-up, discovery); `make bench` runs them and docs/BENCHMARKS.md
// records the figures. It has no code of its own.
package bench
