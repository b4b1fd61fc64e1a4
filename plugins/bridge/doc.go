// Package bridge is hermes-bridge-messaging, the plugin behind
// `hermes mcp serve`: it reads the agent's messaging sessions (state.db,
// sessions.json, the channel directory), turns their changes into events,
// resolves approvals and sends messages on the platforms. Its parts live in
// internal/ (store: the session store; send: delivery to the platforms);
// the plugin's entry point comes with the sdk's bridge kind.
package bridge
