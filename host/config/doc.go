// Package config owns the user's configuration files in the Hermes home folder:
// reading and validating $HERMES_HOME/config.yaml (the mcp_servers section),
// reading and editing $HERMES_HOME/.env, and ${VAR} interpolation.
//
// Edits go through Edit, which holds an exclusive lock for the whole
// read-modify-write, changes only the bytes of the entries it touches (the file
// is parsed with goccy/go-yaml's AST to find them, so comments, key order and
// quoting elsewhere stay byte-identical) and replaces the file atomically.
// A config file that does not parse is never overwritten.
//
// The package does not connect to servers and prints nothing; callers decide
// what to show. Values read from .env never appear in errors.
package config
