// Package tokenstore keeps one MCP server's OAuth credential files in the
// token folder ($HERMES_HOME/mcp-tokens), named after auth.FileStem(server):
//
//   - <stem>.json: the token (Token), with an absolute expires_at;
//   - <stem>.client.json: the OAuth client (Client), and <stem>.client.json.bak,
//     where PoisonClient sets aside a client the authorization server rejected;
//   - <stem>.meta.json: the discovery result (Meta), so a cold start can
//     refresh without discovering again;
//   - <stem>.dpop.json: the private key DPoP-bound tokens are bound to
//     (RFC 9449), kept as its owner gives it (CreateDPoPKey), removed with
//     the tokens;
//   - <stem>.lock: the cross-process lock that serializes refreshes (Lock,
//     RefreshLocked), so two hermes processes never both spend one refresh
//     token.
//
// It owns the file names, the on-disk format (compatible with the files the
// original Hermes wrote), the permissions (folder 0700, files 0600), atomic
// writes (temp file, fsync, rename, fsync of the folder), bounded reads, and
// the refusal to follow a symbolic link at a credential path.
//
// A store made with NewSealed (auth.Config.Seal: a gateway's folder of one
// person) seals every file it writes with AES-256-GCM under a key derived
// from the folder's key, bound to the file's name, and reads only files
// that open with it (ErrWrongKey otherwise, the file left in place); a
// store made with New reads and writes the files in the clear, as ever.
//
// It must not do OAuth: it never contacts an authorization server and never
// decides on its own when a token needs refreshing; the caller's function
// does. It never logs, and it never puts a token, a secret or a file's
// contents in an error: errors name the file and say what is wrong with it.
// Token and Client print (fmt, log/slog) without their secrets.
package tokenstore
