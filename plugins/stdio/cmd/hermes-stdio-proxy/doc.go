// Command hermes-stdio-proxy is the filtering HTTP proxy of a sandboxed
// stdio server whose network is a list of hosts (sandbox.network in
// config.yaml). The stdio plugin (hermes-transport-stdio, beside which it
// is installed) starts one per such server, outside the sandbox, hands it
// the listening socket the server reaches (on the loopback of the server's
// network namespace, or on the plugin's), and kills it with the server; it
// also exits when the plugin's end of its control socket closes, so it
// never outlives the plugin (package proxy holds the contract).
//
// It answers CONNECT (HTTPS and any other TCP protocol) and absolute-form
// HTTP requests for the hosts of its allow-list; everything else gets 403,
// and each target turned away is reported to the plugin, which names it
// when the server fails. Request headers are bounded in size and time,
// connections in number, and each request is logged, escaped, at debug
// level (hclog JSON on stderr, which is the plugin's log). It connects
// directly (an upstream proxy is not used: it gets no environment) and
// refuses an allowed host name that resolves to a loopback, link-local or
// unspecified address unless the entry names that address (or localhost)
// itself, so a DNS answer cannot turn an allowed name into a way to the
// machine's own services or a cloud metadata endpoint.
//
// It is a process of its own so that net/http's server side and httputil
// are paged in only for the servers that use them, not in every plugin.
package main
