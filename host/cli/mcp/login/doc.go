// Package login owns 'hermes mcp login', 'logout', 'reauth' and
// 'auth-status': a server's credentials through its auth plugin, and the
// words that say what a server's authorization needs.
package login
