// Package add owns 'hermes mcp add', 'add-json' and 'import': turning
// a command line, a JSON entry or another client's config into entries of
// config.yaml, screened, probed and approved, with their secrets in .env.
package add
