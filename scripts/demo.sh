#!/usr/bin/env bash
# The newcomer's tour: a throw-away HERMES_HOME with one real MCP server (the
# official server-everything, installed from npm into .npm-deps/), then
# `hermes mcp test` and two `hermes mcp call`s through the stdio plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
home=$(mktemp -d "${TMPDIR:-/tmp}/hermes-demo.XXXXXX")
trap 'rm -rf "$home"' EXIT
export HERMES_HOME="$home"
server="$root/.npm-deps/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
cat > "$home/config.yaml" <<YAML
# A throw-away config written by make demo.
mcp_servers:
  everything:
    command: node
    args: ["$server", "stdio"]
    connect_timeout: 30
YAML
run() { echo; echo "\$ $*"; "$@"; }
echo "HERMES_HOME=$home"
run bin/hermes mcp test everything
run bin/hermes mcp call everything echo --arg message="hello from hermes"
run bin/hermes mcp call everything get-sum --arg a=2 --arg b=3
echo
echo "Each call went hermes → hermes-transport-stdio (its own process) → the server and back."
echo "Server stderr: \$HERMES_HOME/logs/mcp-stderr.log; host and plugin log: \$HERMES_HOME/logs/hermes.log"
