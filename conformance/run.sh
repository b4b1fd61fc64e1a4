#!/usr/bin/env bash
# Runs the official MCP conformance suite in client mode against hermes: the
# suite's test servers are driven by bin/confclient, which connects through
# the real host session code and the HTTP transport plugin.
#
#   conformance/run.sh                 the core client suite of 0.1.16, OAuth included
#                                      (conformance/expected-failures.yml is empty), then every
#                                      scenario the 2026-07-28 revision requires, from 0.2.0-alpha.12
#                                      (conformance/expected-failures-2026-07-28.yml: extensions)
#   conformance/run.sh SCENARIO...     just those scenarios (of 0.1.16; with NEXT=1, of 0.2.0-alpha.12)
#
# Exits non-zero on any unexpected failure. Results land in results-conformance/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.1.16
pkg=".npm-deps/node_modules/@modelcontextprotocol/conformance"
next_version=0.2.0-alpha.12
next_pkg=".npm-deps/conformance-2026/node_modules/@modelcontextprotocol/conformance"

command -v node >/dev/null || { echo "node not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
if [ ! -f "$pkg/package.json" ] || ! grep -q "\"version\": \"$version\"" "$pkg/package.json"; then
  command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
  mkdir -p .npm-deps
  [ -f .npm-deps/package.json ] || echo '{"name":"hermes-npm-deps","private":true}' > .npm-deps/package.json
  npm install --prefix .npm-deps --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$version"
fi
if [ ! -f "$next_pkg/package.json" ] || ! grep -q "\"version\": \"$next_version\"" "$next_pkg/package.json"; then
  command -v npm >/dev/null || { echo "npm not found: install Node.js 20 or newer (apt-get install nodejs npm)" >&2; exit 1; }
  mkdir -p .npm-deps/conformance-2026
  [ -f .npm-deps/conformance-2026/package.json ] || echo '{"name":"hermes-conformance-2026","private":true}' > .npm-deps/conformance-2026/package.json
  npm install --prefix .npm-deps/conformance-2026 --no-audit --no-fund --silent "@modelcontextprotocol/conformance@$next_version"
fi

# Node 20 lacks fs.globSync, which the suite imports; the loader in node20/
# supplies it to the suite's code only. Node 22 and later need nothing.
node_flags=()
if [ "$(node -p 'process.versions.node.split(".")[0]')" -lt 22 ]; then
  node_flags=(--import "$root/conformance/node20/node20-register.mjs")
fi

mkdir -p bin
go build -o bin/hermes-transport-http ./plugins/http
go build -o bin/hermes-auth-oauth ./plugins/oauth
go build -o bin/confclient ./internal/confclient

out="$root/results-conformance"
rm -rf "$out"
suite=(node "${node_flags[@]}" "$pkg/dist/index.js" client --command "$root/bin/confclient" -o "$out")
next_suite=(node "${node_flags[@]}" "$next_pkg/dist/index.js" client --command "$root/bin/confclient" -o "$out/2026-07-28")
if [ "${NEXT:-}" = 1 ]; then
  suite=("${next_suite[@]}")
fi

if [ $# -eq 0 ]; then
  # The whole core suite, OAuth scenarios included (through
  # hermes-auth-oauth). Any failure not in conformance/expected-failures.yml,
  # or a listed scenario that now passes, fails the run.
  echo "== conformance client suite: core ($version)"
  "${suite[@]}" --suite core --expected-failures "$root/conformance/expected-failures.yml"
  echo "conformance: core suite passed (OAuth included)"
  # Every scenario the current revision requires, and its extensions; the
  # same rule for the expected failures (authorization extensions that need
  # key material hermes does not manage).
  echo "== conformance client requirements: 2026-07-28 ($next_version)"
  "${next_suite[@]}" --requirements 2026-07-28 --expected-failures "$root/conformance/expected-failures-2026-07-28.yml"
  echo "conformance: 2026-07-28 requirements passed (expected failures: authorization extensions, see conformance/expected-failures-2026-07-28.yml)"
  exit 0
fi

failed=()
for s in "$@"; do
  echo "== conformance client scenario: $s"
  "${suite[@]}" --scenario "$s" || failed+=("$s")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "conformance: failed scenarios: ${failed[*]} (details in $out)" >&2
  exit 1
fi
echo "conformance: $# scenarios passed"
