// Package testserver is the project's controllable MCP server. It exists for
// tests and benchmarks only: host, plugin and benchmark tests start the
// hermes-testserver binary (cmd/hermes-testserver) as a real process and use
// its flags to inject faults. Nothing shipped imports it.
//
// New builds the MCP server; Main and Run are the binary; GenerateTLS writes
// a throw-away CA, server and client certificates for HTTPS and mTLS tests.
//
// The server speaks both protocol eras mcp-go offers (2026-07-28 and the
// legacy versions, including 2025-11-25, the Hermes default), unless
// --protocols restricts it to some revisions.
//
// # Tools (always present unless --no-tools-capability)
//
//   - echo {message}: returns message verbatim.
//   - add {a, b}: returns the sum as text.
//   - sleep {ms}: sleeps, then returns "slept Nms"; when the request is
//     cancelled (notifications/cancelled, or a dropped HTTP request) it
//     returns early and counts the cancellation.
//   - cancelled_count: how many sleep calls were cancelled.
//   - crash: the process exits with status 3 mid-call, without answering.
//   - huge {bytes}: a text result of that many bytes.
//   - stderr {lines}: writes that many noise lines to stderr, returns "ok".
//   - env {name}: the value of that environment variable, or "".
//   - add_tool {name} / remove_tool {name}: changes the tool list at
//     runtime, which sends notifications/tools/list_changed.
//   - notify_burst {count, toggle}: sends count tools/list_changed
//     notifications back to back; with toggle each comes from adding or
//     removing the tool burst_toggle.
//   - sample {prompt, model}: asks the client for sampling/createMessage
//     (model, when given, as its model hint) and returns the model's text.
//   - elicit {message, schema, mode, url}: asks the client via
//     elicitation/create and returns {"action":..., "content":...} as JSON
//     text; schema (JSON) replaces the one-field form, mode url asks to
//     open url instead.
//   - roots {changes}: asks the client for roots/list and returns the roots
//     as JSON; with changes, how many notifications/roots/list_changed the
//     client sent (also traced, TraceRootsChanged).
//   - image: a 1x1 PNG image content.
//   - log {level, logger, data}: sends a notifications/message entry (legacy
//     clients receive it once they called logging/setLevel).
//   - pid: the server's process id.
//   - structured: structuredContent {name, count, tags} plus a text copy.
//   - error_result: an isError result containing "Bearer sk-abc123secret".
//   - last_auth_header: the Authorization header of the HTTP request that
//     carried the call ("" over stdio).
//   - echo_meta (with --echo-meta): the params._meta of the call as JSON text ({} without
//     one), progressToken included.
//   - slow_stream {steps, interval_ms}: sends progress notifications (on the
//     caller's progress token, or "slow_stream") then returns "done"; over
//     HTTP the response becomes an SSE stream.
//   - tool_1 .. tool_N with --tools N.
//   - admin_echo {message}: with --oauth-issuer only; returns message
//     verbatim, and its calls need the admin scope.
//
// sample, elicit and roots return multi round-trip input requests, which
// modern clients answer directly; for legacy clients mcp-go turns them into
// server-initiated requests. Over streamable HTTP, legacy sampling and roots
// requests travel on the session's GET stream, so such clients need
// continuous listening; elicitation also works on the call's own stream.
// mcp-go's legacy SSE server cannot send server-initiated requests at all, so
// over --sse these three tools return an error.
//
// # Flags
//
// Flags may also be given in the environment variable
// HERMES_TESTSERVER_FLAGS, separated by spaces (quotes group words); the
// command line wins. Durations are in milliseconds.
//
// Transport:
//
//	--http ADDR          streamable HTTP at ADDR/mcp (ADDR may be 127.0.0.1:0);
//	                     prints "listening on http(s)://127.0.0.1:PORT"
//	--sse ADDR           legacy SSE transport: GET /sse, POST /message; same line
//	--tls-cert FILE      serve HTTPS (with --tls-key)
//	--tls-key FILE
//	--client-ca FILE     require client certificates signed by this CA (mTLS)
//
// Without --http or --sse the server speaks MCP over stdin/stdout.
//
// Protocol revisions (stdio and --http):
//
//	--protocols LIST     speak only these revisions, comma-separated, of
//	                     2026-07-28 (modern), 2025-11-25, 2025-06-18,
//	                     2025-03-26 and 2024-11-05 (legacy); unknown ones are
//	                     a flag error. Empty (the default): all of them.
//
// With --protocols, a filter in front of mcp-go decides each request:
//
//   - Without 2026-07-28, server/discover gets the JSON-RPC error -32601
//     "Method not found" (HTTP 200), as from a server that predates it.
//   - A request whose _meta declares a modern revision that is not listed
//     (io.modelcontextprotocol/protocolVersion) is refused the way mcp-go
//     refuses an unsupported version: error -32022
//     (UNSUPPORTED_PROTOCOL_VERSION) with data {"supported": LIST,
//     "requested": the declared revision}; over HTTP with status 400.
//   - Without a legacy revision, initialize is refused with that error,
//     "requested" being the protocolVersion asked (HTTP 400, JSON body).
//   - Otherwise initialize answers the revision asked when it is listed, else
//     the newest listed legacy revision (an empty request means 2025-03-26).
//   - With 2026-07-28, server/discover lists exactly LIST in
//     supportedVersions, newest first.
//   - Over HTTP, a request after initialize whose Mcp-Protocol-Version header
//     names an unlisted legacy revision gets a plain 400 "Unsupported
//     protocol version", as mcp-go answers an unknown one.
//
// With a LIST without 2026-07-28, --discover MODE changes how server/discover
// is refused: "ignore" never answers it (stdio; an HTTP POST hangs), as a
// server that ignores unknown methods; "null-id" answers a JSON-RPC error
// whose id is null (-32000 "Bad Request: Server not initialized", HTTP 400),
// as a stateful TypeScript SDK server refuses any request before initialize.
//
// Everything else (notifications, responses, legacy requests) goes to mcp-go
// unchanged. --sse ignores --protocols (the SSE transport is legacy by
// nature) and refuses a LIST holding only 2026-07-28; a hostile server
// refuses --protocols.
//
// Server shape and startup faults:
//
//	--name NAME          server name in initialize (default hermes-testserver)
//	--server-version V   server version in initialize (default 0.1.0)
//	--tool-desc TEXT     description of echo (and of --extra-tool)
//	--extra-tool NAME    add a tool NAME that answers with its own name
//	--dup-tools          tools/list lists every tool twice, the copies last
//	--empty-tool-name    tools/list also lists a tool whose name is ""
//	--tools N            add tool_1..tool_N with descriptions
//	--page-size N        list pagination limit
//	--no-tools-capability  no tools and no tools capability
//	--read-only-tools      every tool annotated readOnlyHint: true (else mcp-go lists
//	                       each with destructiveHint: true, which approvals ask about)
//	--resources          resources test://static/hello.txt (text) and
//	                     test://static/pixel.png (blob), template test://items/{id}
//	--prompts            prompts greet {name} and summarize {text, style}
//	                     and completions: summarize's style (short, long),
//	                     test://items/{id}'s id (1 to 3), by prefix
//	--slow-start MS      sleep before serving
//	--fail-start MSG     print MSG to stderr and exit 1 immediately
//	--hang-initialize    never answer initialize (stdio: read stdin, never write;
//	                     HTTP: initialize and server/discover POSTs hang)
//	--garbage            stdio: write non-JSON lines to stdout, never answer;
//	                     HTTP: every POST gets a non-JSON 200 body
//	--banner             stdio: write one non-JSON line to stdout, then serve
//	--exit-after-init MS exit (status 0) MS after initialize (or server/discover)
//	--stderr-noise       write a line to stderr every 10 ms
//	--trace              write "hermes-testserver trace: ping" to stderr for each
//	                     ping, "hermes-testserver trace: tools/list" for each
//	                     tools/list and "hermes-testserver trace: sleep started"
//	                     for each sleep call, for tests to wait on instead of
//	                     sleeping
//	--ping-error MSG     stdio, with --protocols: answer every ping with the
//	                     JSON-RPC error -32000 MSG (a server without ping that
//	                     does not say -32601)
//	--linger             stdio: keep running after stdin closes (until a signal)
//	--ignore-sigterm     ignore SIGTERM: only SIGKILL stops the server
//
// HTTP faults (need --http):
//
//	--status-on N:CODE   the Nth and later POSTs get HTTP status CODE
//	--html-root          GET/HEAD on / and /mcp return a text/html page
//	--html-only          every request gets a text/html page
//	--require-bearer TOK 401 with WWW-Authenticate: Bearer resource_metadata="..."
//	--plain-challenge    with --require-bearer: WWW-Authenticate: Bearer realm="hermes-testserver"
//	                     unless "Authorization: Bearer TOK"; the metadata is served
//	                     at /.well-known/oauth-protected-resource/mcp
//	--redirect-to URL    every request is redirected (307) to URL
//	--cut-stream         the SSE response of slow_stream calls is cut after its
//	                     first event
//	--session-ttl MS     a session ends MS after initialize; requests for it then
//	                     get 404, as from a restarted server. Adds the tool
//	                     expire_sessions, which ends every session at once
//
// OAuth 2.1 protected resource (needs --http; not with --require-bearer). The
// end-to-end tests run it behind the authorization server of
// internal/testoauth:
//
//	--oauth-issuer URL       the authorization server whose tokens are accepted
//	--oauth-scopes LIST      scopes every request needs, space or comma separated
//	                         (default "mcp:read")
//	--oauth-admin-scope S    the scope admin_echo needs as well (default mcp:admin)
//	--oauth-dpop             DPoP-bound tokens only (RFC 9449), below
//	--oauth-dpop-nonce       with --oauth-dpop, the server's nonce in every proof
//
// The resource is the server's MCP URL as the client addressed it
// (http://127.0.0.1:PORT/mcp). Its RFC 9728 metadata, at
// /.well-known/oauth-protected-resource/mcp, names it, authorization_servers
// [URL] and scopes_supported (the scopes and the admin scope). Every other
// request needs "Authorization: Bearer TOKEN" where TOKEN is a JWT access
// token (RFC 9068, typ at+jwt, RS256) signed by a key of the issuer's JWKS
// (jwks_uri of its /.well-known/oauth-authorization-server; cached a minute,
// fetched again for an unknown key id), whose iss is URL, whose aud holds the
// resource, unexpired, and whose scope claim holds the needed scopes. Opaque
// tokens are refused: the server never introspects. Answers:
//
//   - no bearer token: 401, WWW-Authenticate: Bearer
//     resource_metadata="<metadata URL>", scope="mcp:read";
//   - an invalid token (bad signature, other issuer or audience, expired):
//     401, Bearer error="invalid_token", error_description="...",
//     resource_metadata=..., scope=...;
//   - a token without the scopes, or a tools/call of admin_echo whose token
//     lacks the admin scope: 403, Bearer error="insufficient_scope",
//     resource_metadata=..., scope="mcp:read mcp:admin" (the scopes that
//     request needs), for the client to step up.
//
// With --oauth-dpop the scheme is DPoP instead of Bearer, in the requests
// and in the challenges, the metadata says dpop_bound_access_tokens_required,
// and every request needs one DPoP proof (dpop.go): typ dpop+jwt, signed by
// the public jwk of its header, that key's thumbprint the token's cnf.jkt,
// htm and htu the request's, ath the token's SHA-256, iat within a minute,
// a jti never seen; otherwise 401, DPoP error="invalid_dpop_proof". With
// --oauth-dpop-nonce a proof without the server's nonce is 401, DPoP
// error="use_dpop_nonce", with the nonce in the DPoP-Nonce header.
//
// Hostile servers (stdio, or --http; one attack each). The server is then a
// small hand-written one that streams what it sends, so its own memory stays
// small: it answers initialize, ping and tools/list, and offers the tools
// attack (starts the attack), echo {message} and burst_stats (how the client
// answered the burst, as JSON text {sent, answered, refused, failed}; refused
// counts error answers with code -32000):
//
//	--huge-result BYTES  attack returns a text result of BYTES bytes
//	--endless-message    attack gets a message that never ends: stdio, a line
//	                     without a newline; HTTP, a chunked JSON body
//	--endless-event      (HTTP) attack gets an SSE response whose first event
//	                     never ends
//	--request-burst N    attack sends N sampling/createMessage requests back to
//	                     back (HTTP: on the call's SSE response), and answers
//	                     the call once at most 64 of them are unanswered
//	--hang-list          offers tools, resources and prompts, answers
//	                     initialize, but never tools/list, resources/list or
//	                     prompts/list
//	--deep-schema N      tools/list also lists a tool "deep" (first) whose input
//	                     schema nests N levels of properties (N = 9000 is
//	                     deeper than encoding/json reads)
//	--log-flood N        (stdio) attack sends N notifications/message entries
//	                     (logger "flood") back to back, then answers the call
//	--shell-names        (stdio) tools/list also lists ShellToolNames (names
//	                     that are shell code, control characters, globs) and
//	                     ShellSafeToolNames
//
// Processes:
//
//	--daemon PIDFILE     at start, double-fork a setsid daemon (it leaves the
//	                     server's process group and is orphaned at once) that
//	                     writes its pid to PIDFILE, keeps the server's stderr
//	                     open, ignores SIGTERM, SIGHUP and SIGINT, and sleeps
//	                     until killed. (--daemon-fork and --daemon-run are its
//	                     two processes, for internal use.)
//
// # Exit status
//
// 0 on a clean end (stdin closed, SIGINT/SIGTERM, --exit-after-init), 1 on
// --fail-start or a serve error, 2 on a bad flag, 3 from the crash tool.
package testserver
