// Package bench holds the project's benchmarks of whole paths, each measured
// against its floor in the same run: a tool call through the stdio plugin
// against the same call made in-process with mcp-go's own stdio transport
// (echo and a 1 MiB result), in each protocol revision (2026-07-28 and
// 2025-11-25); the plugin's start and resident memory against a bare
// go-plugin net/rpc plugin (testdata/bareplugin) started by the same
// supervisor; a one-shot `hermes mcp call` against a minimal mcp-go client
// (testdata/oneshotclient), with server-everything and, in each revision,
// the Go test server; `hermes tools` with one and ten servers, wall time
// and the CPU time of the whole process tree; and discovery in the
// registry. Baselines and the measured path alternate within each run, so
// a busy machine shifts both alike.
//
// Benchmarks only measure: they report ratios as metrics and say whether a
// floor is met, and never fail on one. `make bench` runs them and
// docs/BENCHMARKS.md records the figures.
//
// TestHostile (run with -hostile, by `make hostile`) is the hostile-server
// figures of docs/HOSTILE.md: each attack of a hostile test server against
// a host process of its own, with the peak memory of host and plugin and
// the time to a clear error; unlike the benchmarks it fails when an attack
// is not stopped. The package has no code of its own.
package bench
