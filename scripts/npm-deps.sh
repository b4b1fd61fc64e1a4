#!/usr/bin/env bash
# Installs the pinned Node packages the tests, the demo and the conformance
# run use into .npm-deps/ (git-ignored). Offline after the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
want=(
  "@modelcontextprotocol/server-everything@2026.8.31"
  "@modelcontextprotocol/server-filesystem@2026.8.31"
  "@modelcontextprotocol/conformance@0.1.16"
)
# The conformance suite of the 2026-07-28 revision is a prerelease of the same
# package: it gets a folder of its own.
next="@modelcontextprotocol/conformance@0.2.0-alpha.12"
stamp=".npm-deps/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${want[*]} $next" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p .npm-deps/conformance-2026
[ -f .npm-deps/package.json ] || echo '{"name":"hermes-npm-deps","private":true}' > .npm-deps/package.json
[ -f .npm-deps/conformance-2026/package.json ] || echo '{"name":"hermes-conformance-2026","private":true}' > .npm-deps/conformance-2026/package.json
npm install --prefix .npm-deps --no-audit --no-fund --silent "${want[@]}"
npm install --prefix .npm-deps/conformance-2026 --no-audit --no-fund --silent "$next"
echo "${want[*]} $next" > "$stamp"
