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
//   - <server>.approved.json, the Baseline: the tools the person approved
//     (at hermes mcp add/install/configure, or trusted on first use), each
//     as its digest, the digests of its parts and the start of its
//     description: a bounded size per tool whatever the server sent. It is
//     not a cache: rebuilding the Record never touches it; it changes only
//     when tools are approved (Approve) or trusted on first use (Trust),
//     and RemoveServer deletes it with the record. One that exists but
//     cannot be read is never taken for a missing one: Trust does not
//     replace it, and the registry withholds the server's tools until the
//     person approves them again. Drift (Compare) is the difference
//     between the Baseline and a fresh listing (the one a Record holds).
//
// <server> is the server's state key (config.Server.StateKey): its name,
// or name@ and 12 hex digits for a project's server; nothing else is
// accepted, so a key never names a file outside the store. Files are
// written as compact JSON without HTML escaping. A record is read bounded
// by the server's max_message_mb (a listing arrives in messages of at most
// that size); a baseline by hermes's own MaxBaselineBytes, never by what
// the server may send. Records of different servers
// are different files, so two hermes processes writing at once never lose
// each other's servers; the baseline is changed read-modify-write under its
// lock, so two processes approving tools at once lose no approval.
//
// The package does not connect to servers, decide policy (warn or deny) or
// talk to a person: the registry and the CLI do.
package offered
