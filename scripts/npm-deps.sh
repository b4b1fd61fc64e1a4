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
stamp=".npm-deps/.installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "${want[*]}" ]; then
  exit 0
fi
command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
mkdir -p .npm-deps
[ -f .npm-deps/package.json ] || echo '{"name":"hermes-npm-deps","private":true}' > .npm-deps/package.json
npm install --prefix .npm-deps --no-audit --no-fund --silent "${want[@]}"
echo "${want[*]}" > "$stamp"
