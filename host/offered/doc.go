// Package offered owns the one store of what each MCP server offered the
// host, under $HERMES_HOME/offered/: lazy start registers a server's tools
// from it without starting the server, completion lists from it, and the
// tool-definition drift check compares against it. One store, two kinds of
// file per server, both written atomically under a lock (package
// atomicfile), 0600 in a 0700 folder:
//
//   - <server>.json, the Record: the server's last successful tools/list
//     (full definitions), its resources and prompts capabilities, server
//     info, instructions, the negotiated protocol revision, a digest per
//     tool, when it was fetched, and the digest of the connection settings
//     it was fetched with (SettingsDigest), so that a record of other
//     settings is never taken for this server. It is a cache: the registry
//     rewrites it on every successful connection and every
//     tools/list_changed, and a damaged, oversized, foreign-owned or
//     symlinked one is ignored (logged once) and rebuilt at the next
//     connection.
//   - <server>.approved.json, the Baseline: the definitions of the tools
//     the person approved (at hermes mcp add/install/configure, or trusted
//     on first use), with their digests. It is not a cache: rebuilding the
//     Record never touches it; it changes only when tools are approved
//     (Approve) or trusted on first use (Trust), and RemoveServer deletes
//     it with the record. Drift (Compare) is the difference between the
//     Baseline and a fresh listing (the one a Record holds).
//
// A record is read bounded by the server's max_message_mb (a listing
// arrives in messages of at most that size). Records of different servers
// are different files, so two hermes processes writing at once never lose
// each other's servers; the baseline is changed read-modify-write under its
// lock, so two processes approving tools at once lose no approval.
//
// The package does not connect to servers, decide policy (warn or deny) or
// talk to a person: the registry and the CLI do.
package offered
