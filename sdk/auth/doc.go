// Package auth is the contract of auth plugins (hermes-auth-<name>): they
// turn "this server wants credentials" into request headers. A plugin
// implements Authenticator in one small main and calls Serve (the host's
// side is sdk/pluginhost).
//
// What an auth plugin does: give headers for a request to the server (a
// cached token, refreshed when needed), react to a challenge (a 401 or 403
// with WWW-Authenticate: refresh, step up, or say a login is needed), log in
// interactively, log out, and report its status (who, scopes, expiry; never
// a token). It never sees MCP traffic, and it never reads or writes the
// terminal: interactive steps (open a URL, show a device code, ask for a
// pasted redirect URL) go through the host's UI, which owns the terminal.
//
// Credentials live in Config.TokenDir ($HERMES_HOME/mcp-tokens, 0700), in
// files named after FileStem(server) and written 0600.
//
// WWW-Authenticate is read here, on the auth side: ParseBearer and
// ParseChallenges are the one parser plugins and the host share. A
// Challenge's answer carries the headers to retry with (Answer.Headers), so
// that a refresh is one round trip for the transport.
//
// This package depends on go-plugin, hclog and the sdk root only.
package auth
