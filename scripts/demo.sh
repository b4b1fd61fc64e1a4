#!/usr/bin/env bash
# The newcomer's tour, the way a person uses hermes: add a real MCP server
# (the official server-everything, from npm) picking two of its tools, list,
# test and call it, add the same server over HTTP, and see what a model
# would get. Every command is printed so it can be pasted; the demo's
# HERMES_HOME is kept afterwards to look around in.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
home=$(mktemp -d "${TMPDIR:-/tmp}/hermes-demo.XXXXXX")
export HERMES_HOME="$home"
export PATH="$root/bin:$PATH"
server="$root/.npm-deps/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$server" ] || { echo "server-everything is not installed: run make demo (it installs it)" >&2; exit 1; }

# run prints a command as it can be pasted (quoted where needed), then runs it.
run() {
  printf '\n$'
  printf ' %q' "$@"
  printf '\n'
  "$@"
}

http_pid=
cleanup() { [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true; }
trap cleanup EXIT

echo "HERMES_HOME=$home   (a fresh, throw-away home for this demo)"

# A local stdio server: hermes starts it, lists its tools, saves the two picked.
run hermes mcp add everything --tools echo,get-sum --command node --args "$server" stdio
run hermes mcp list
run hermes mcp test everything
run hermes mcp call everything echo --arg "message=hello from hermes"
run hermes mcp call everything get-sum --arg a=2 --arg b=3

# The same server over streamable HTTP, on a free loopback port.
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
PORT=$port node "$server" streamableHttp >"$home/everything-http.log" 2>&1 &
http_pid=$!
for _ in $(seq 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.1
done
run hermes mcp add everything-http --url "http://127.0.0.1:$port/mcp" --tools echo
run hermes tools

echo
echo "Each call went hermes → a transport plugin (its own process) → the server and back."
echo "Look around: $home"
echo "  config.yaml               what the adds wrote (comments and order are kept on every edit)"
echo "  logs/hermes.log           host and plugin log"
echo "  logs/mcp-stderr.log       the servers' stderr"
echo "Go on from here: export HERMES_HOME=$home"
