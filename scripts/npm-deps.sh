#!/usr/bin/env bash
# Installs the pinned Node packages the tests, the demo and the conformance
# run use into .npm-deps/ (git-ignored). Offline after the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
want=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/conformance@0.1.16"
  # The MCP Inspector's CLI mode, the external client of the hermes mcp serve
  # tests (host/cli/serve_clients_test.go). The Inspector itself
  # (@modelcontextprotocol/inspector) declares Node 22 from 0.16 on, for its
  # web UI; its CLI, published as this package, declares no engine and its
  # dependencies accept Node 18 and later, so it runs on the Node 20 of CI.
  "@modelcontextprotocol/inspector-cli@1.0.3"
  # The TypeScript SDK, whose client the gateway's tests run
  # (host/gateway/testdata/tsclient.mjs).
  "@modelcontextprotocol/sdk@1.32.2"
)
# The conformance suite of the 2026-07-28 revision is a prerelease of the same
# package: it gets a folder of its own.
next="@modelcontextprotocol/conformance@0.2.0-alpha.12"
# The authorization server of the OAuth end-to-end tests
# (internal/testoauth/as.mjs), in a folder of its own too.
oauth_as="oidc-provider@9.13.3"
command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
# `npm-deps.sh demo`: only the server make demo runs.
if [ "${1:-}" = demo ]; then
  demo="${want[0]}"
  [ -f .npm-deps/.demo ] && [ "$(cat .npm-deps/.demo)" = "$demo" ] && exit 0
  mkdir -p .npm-deps
  [ -f .npm-deps/package.json ] || echo '{"name":"hermes-npm-deps","private":true}' > .npm-deps/package.json
  echo "Installing $demo from npm into .npm-deps/ (once; it can take a minute)..."
  npm install --prefix .npm-deps --no-audit --no-fund --silent "$demo"
  echo "$demo" > .npm-deps/.demo
  exit 0
fi
stamp=".npm-deps/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${want[*]} $next $oauth_as" ]; then
  exit 0
fi
mkdir -p .npm-deps/conformance-2026 .npm-deps/oauth-as
[ -f .npm-deps/package.json ] || echo '{"name":"hermes-npm-deps","private":true}' > .npm-deps/package.json
[ -f .npm-deps/conformance-2026/package.json ] || echo '{"name":"hermes-conformance-2026","private":true}' > .npm-deps/conformance-2026/package.json
[ -f .npm-deps/oauth-as/package.json ] || echo '{"name":"hermes-oauth-as","private":true}' > .npm-deps/oauth-as/package.json
echo "Installing the pinned npm packages the tests use into .npm-deps/ (once; it can take a few minutes)..."
npm install --prefix .npm-deps --no-audit --no-fund --silent "${want[@]}"
npm install --prefix .npm-deps/conformance-2026 --no-audit --no-fund --silent "$next"
npm install --prefix .npm-deps/oauth-as --no-audit --no-fund --silent "$oauth_as"
echo "${want[*]} $next $oauth_as" > "$stamp"
