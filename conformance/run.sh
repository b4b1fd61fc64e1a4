#!/usr/bin/env bash
# Runs the official MCP conformance suite in client mode against hermes: the
# suite's test servers are driven by bin/confclient, which connects through
# the real host session code and the HTTP transport plugin.
#
#   conformance/run.sh                 every client scenario of 0.1.16 (--suite all: OAuth and the
#                                      authorization extensions included; conformance/expected-failures.yml
#                                      is empty), then every scenario the 2026-07-28 revision requires,
#                                      from 0.2.0-alpha.12 (conformance/expected-failures-2026-07-28.yml),
#                                      each followed by its per-scenario check counts
#   conformance/run.sh SCENARIO...     just those scenarios (of 0.1.16; with NEXT=1, of 0.2.0-alpha.12)
#   conformance/run.sh --server [SCENARIO...]
#                                      only the server suite (below), or just those of its scenarios
#   conformance/run.sh --gateway [SCENARIO...]
#                                      only the gateway's server suite (below), or just those of its scenarios
#
# The run without arguments ends with the suite's server mode against
# `hermes mcp serve --http` (a HERMES_HOME of the bridge's state.db fixture,
# written by python3): the scenarios that apply to a server of tools only,
# listed and explained in conformance/README.md. The suite's client sends no
# Authorization header, so it talks to the server through bin/authproxy, a
# loopback proxy that adds the bearer token and leaves Host and Origin as
# the suite sent them.
#
# Then the same suites (0.1.16, and 0.2.0-alpha.12 for the 2025-11-25 and
# 2026-07-28 revisions) against `hermes mcp gateway --http` fronting
# @modelcontextprotocol/server-everything, with a static bearer token that
# bin/authproxy adds: every scenario of conformance/gateway-scenarios.txt
# whose capabilities the gateway declares in its initialize result runs and
# must pass (check-level exceptions in conformance/expected-failures-gateway.yml);
# the others are listed with what they wait for.
#
# Exits non-zero on any unexpected failure. Results land in results-conformance/.
set -euo pipefail

# served_url LOG SED PID WHAT waits (bounded: 60 s) for the line of LOG that
# names the URL a server listens on, and prints it; a server that exits or
# never says is an error, with its log.
served_url() {
  local log=$1 expr=$2 pid=$3 what=$4 url=""
  for i in $(seq 600); do
    url=$(sed -n "$expr" "$log" | head -n1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$url" ]; then
    echo "$what did not start:" >&2
    cat "$log" >&2
    return 1
  fi
  printf '%s\n' "$url"
}
cd "$(dirname "$0")/.."
root=$(pwd)
version=0.1.16
pkg=".npm-deps/node_modules/@modelcontextprotocol/conformance"
next_version=0.2.0-alpha.12
next_pkg=".npm-deps/conformance-2026/node_modules/@modelcontextprotocol/conformance"
# The bridge plugin behind `hermes mcp serve`, for the server suite.
bridge_pkg=./plugins/bridge

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

# The server suite: the scenarios of each package version that apply to a
# server with tools only (no resources, prompts, completions, logging,
# sampling or elicitation, and none of the suite's own test tools).
server_scenarios=(server-initialize ping tools-list server-sse-multiple-streams dns-rebinding-protection)
next_server_scenarios=(server-session-lifecycle)

# The server, the proxy and the fixture home of the server suite, stopped
# and removed however the script ends.
serve_pid="" proxy_pid="" home=""
stop_server() {
  if [ -n "$proxy_pid" ]; then kill "$proxy_pid" 2>/dev/null || true; wait "$proxy_pid" 2>/dev/null || true; fi
  if [ -n "$serve_pid" ]; then kill "$serve_pid" 2>/dev/null || true; wait "$serve_pid" 2>/dev/null || true; fi
  if [ -n "$home" ]; then rm -rf "$home"; fi
  serve_pid="" proxy_pid="" home=""
}

# run_server_suite [SCENARIO...]: starts `hermes mcp serve --http` on a
# fixture home and the token-adding proxy, runs the scenarios (all of both
# lists by default), and stops both.
run_server_suite() {
  command -v python3 >/dev/null || { echo "python3 not found: the server suite writes its state.db fixture with it (apt-get install python3)" >&2; return 1; }
  # Called from a condition, where errexit is off: every step checks.
  go build -o bin/hermes ./cmd/hermes || return 1
  go build -o bin/hermes-bridge-messaging "$bridge_pkg" || return 1
  go build -o bin/authproxy ./conformance/authproxy || return 1
  local url="" proxy_url="" i
  home=$(mktemp -d) || return 1
  trap 'stop_server; stop_gateway' EXIT
  local testdata=plugins/bridge/internal/store/testdata
  python3 "$testdata/make_state_db.py" current "$home/state.db" || return 1
  mkdir -p "$home/sessions" || return 1
  cp "$testdata/sessions.json" "$home/sessions/sessions.json" || return 1
  cp "$testdata/channel_directory.json" "$home/channel_directory.json" || return 1
  local token
  token=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
  [ ${#token} -eq 48 ] || { echo "could not make a token from /dev/urandom" >&2; return 1; }
  (umask 077 && printf 'HERMES_MCP_SERVE_TOKEN=%s\n' "$token" > "$home/.env") || return 1
  HERMES_HOME="$home" HERMES_PLUGIN_PATH="$root/bin" bin/hermes mcp serve --http 127.0.0.1:0 </dev/null >/dev/null 2>"$home/serve.log" &
  serve_pid=$!
  url=$(served_url "$home/serve.log" 's/.*Serving MCP on \(http:[^ ]*\).*/\1/p' "$serve_pid" "hermes mcp serve --http") || return 1
  HERMES_MCP_SERVE_TOKEN="$token" bin/authproxy -to "$url" >"$home/proxy.out" 2>&1 &
  proxy_pid=$!
  for i in $(seq 100); do
    proxy_url=$(sed -n 's/^authproxy: \(http:.*\)$/\1/p' "$home/proxy.out" | head -n1)
    [ -n "$proxy_url" ] && break
    kill -0 "$proxy_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$proxy_url" ]; then
    echo "authproxy did not start:" >&2
    cat "$home/proxy.out" >&2
    return 1
  fi
  echo "== conformance server suite: hermes mcp serve --http at $url (through $proxy_url)"
  local stable=("${server_scenarios[@]}") next=("${next_server_scenarios[@]}") failed=() s
  if [ $# -gt 0 ]; then
    stable=() next=()
    for s in "$@"; do
      if [[ " ${next_server_scenarios[*]} " == *" $s "* ]]; then next+=("$s"); else stable+=("$s"); fi
    done
  fi
  for s in "${stable[@]}"; do
    echo "== conformance server scenario ($version): $s"
    node "${node_flags[@]}" "$pkg/dist/index.js" server --url "$proxy_url" --scenario "$s" \
      --expected-failures "$root/conformance/expected-failures-server.yml" -o "$out/server" || failed+=("$s")
  done
  for s in "${next[@]}"; do
    echo "== conformance server scenario ($next_version, spec 2025-11-25): $s"
    node "${node_flags[@]}" "$next_pkg/dist/index.js" server --url "$proxy_url" --scenario "$s" --spec-version 2025-11-25 \
      --expected-failures "$root/conformance/expected-failures-server.yml" -o "$out/server-2026" || failed+=("$s")
  done
  if [ ${#failed[@]} -gt 0 ]; then
    echo "conformance: failed server scenarios: ${failed[*]} (details in $out/server*, server log below)" >&2
    cat "$home/serve.log" >&2
    return 1
  fi
  stop_server
  echo "conformance: server suite passed: $((${#stable[@]} + ${#next[@]})) scenarios against hermes mcp serve --http"
}

# The gateway's server suite: its table, its expected failures (0.2.0-alpha.12
# only: 0.1.16 reads no check-level entries) and its fixture home.
gateway_table="$root/conformance/gateway-scenarios.txt"
gateway_expected="$root/conformance/expected-failures-gateway.yml"
everything=".npm-deps/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
gw_pid="" gw_proxy_pid="" gw_home=""
stop_gateway() {
  if [ -n "$gw_proxy_pid" ]; then kill "$gw_proxy_pid" 2>/dev/null || true; wait "$gw_proxy_pid" 2>/dev/null || true; fi
  if [ -n "$gw_pid" ]; then kill "$gw_pid" 2>/dev/null || true; wait "$gw_pid" 2>/dev/null || true; fi
  if [ -n "$gw_home" ]; then rm -rf "$gw_home"; fi
  gw_pid="" gw_proxy_pid="" gw_home=""
}

# suite_scenarios PKG: the server scenarios the suite package at PKG lists.
suite_scenarios() {
  node "${node_flags[@]}" "$1/dist/index.js" list </dev/null | sed -n '/^Server scenarios/,/^$/p' | sed -n 's/^  - \([^ ]*\).*/\1/p'
}

# run_gateway_suite [SCENARIO...]: starts `hermes mcp gateway --http` on a
# home whose config serves server-everything to one static token, and the
# proxy that adds the token; reads the capabilities the gateway declares;
# runs every scenario of the table that they allow (or just those named),
# and prints each one's checks and, for the rest, what they wait for.
run_gateway_suite() {
  # Called from a condition, where errexit is off: every step checks.
  [ -f "$everything" ] || ./scripts/npm-deps.sh || return 1
  go build -o bin/hermes ./cmd/hermes || return 1
  go build -o bin/hermes-gateway ./cmd/hermes-gateway || return 1
  go build -o bin/hermes-transport-stdio ./plugins/stdio || return 1
  go build -trimpath -o bin/hermes-stdio-launcher ./plugins/stdio/cmd/hermes-stdio-launcher || return 1
  go build -o bin/authproxy ./conformance/authproxy || return 1
  # Every server scenario of both packages is in the table, so a new one
  # in a later version is not silently left out.
  local listed missing=() s
  listed=$(sed -e 's/#.*//' "$gateway_table" | awk 'NF >= 3 {print $2}')
  for s in $(suite_scenarios "$pkg") $(suite_scenarios "$next_pkg"); do
    grep -qx -- "$s" <<<"$listed" || missing+=("$s")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "conformance: server scenarios not in conformance/gateway-scenarios.txt: ${missing[*]}; add each with what it needs" >&2
    return 1
  fi
  local url="" proxy_url="" i token sum node_bin
  gw_home=$(mktemp -d) || return 1
  trap 'stop_server; stop_gateway' EXIT
  token=$(od -An -tx1 -N24 /dev/urandom | tr -d ' \n')
  [ ${#token} -eq 48 ] || { echo "could not make a token from /dev/urandom" >&2; return 1; }
  sum=$(printf %s "$token" | sha256sum | cut -d' ' -f1) || return 1
  node_bin=$(command -v node)
  # A home of its own: the config (the token's sha256 only), the session
  # key in .env (mode 0600), the audit file.
  cat >"$gw_home/config.yaml" <<EOF_CONFIG || return 1
mcp_servers:
  everything:
    command: $node_bin
    args: ["$root/$everything", "stdio"]
gateway:
  resource: http://127.0.0.1/mcp
  tokens:
    - {subject: conformance, sha256: "$sum"}
  policy:
    - {allow: {tools: ["*"]}}
  audit: {file: $gw_home/audit.jsonl}
EOF_CONFIG
  (umask 077 && printf 'HERMES_GATEWAY_SESSION_KEY=%s\n' "$(od -An -tx1 -N48 /dev/urandom | tr -d ' \n')" > "$gw_home/.env") || return 1
  HERMES_HOME="$gw_home" HERMES_PLUGIN_PATH="$root/bin" bin/hermes -v mcp gateway --http 127.0.0.1:0 </dev/null >/dev/null 2>"$gw_home/gateway.log" &
  gw_pid=$!
  url=$(served_url "$gw_home/gateway.log" 's/^hermes mcp gateway: serving .* at \(http:[^ ]*\)$/\1/p' "$gw_pid" "hermes mcp gateway") || return 1
  GATEWAY_TOKEN="$token" bin/authproxy -token-env GATEWAY_TOKEN -to "$url" >"$gw_home/proxy.out" 2>&1 &
  gw_proxy_pid=$!
  for i in $(seq 100); do
    proxy_url=$(sed -n 's/^authproxy: \(http:.*\)$/\1/p' "$gw_home/proxy.out" | head -n1)
    [ -n "$proxy_url" ] && break
    kill -0 "$gw_proxy_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [ -z "$proxy_url" ]; then
    echo "authproxy did not start:" >&2
    cat "$gw_home/proxy.out" >&2
    return 1
  fi
  local caps
  caps=$(node "$root/conformance/gateway.mjs" capabilities "$proxy_url") || { cat "$gw_home/gateway.log" >&2; return 1; }
  echo "== conformance gateway suite: hermes mcp gateway at $url (through $proxy_url), fronting server-everything; it declares: ${caps:-nothing}"

  local suite_ scenario needs expect dir log counts cap ok
  local passed=() failed=() waiting=() fixture=() extension=()
  while read -r suite_ scenario needs expect <&3; do
    if [ $# -gt 0 ] && [[ " $* " != *" $scenario "* ]]; then continue; fi
    case "$needs" in
    fixture) fixture+=("$scenario"); continue ;;
    extension) extension+=("$scenario"); continue ;;
    -) ;;
    *)
      ok=1
      for cap in ${needs//,/ }; do
        [[ " $caps " == *" $cap "* ]] || ok=0
      done
      if [ $ok = 0 ]; then
        waiting+=("$suite_ $scenario ($needs)")
        continue
      fi
      ;;
    esac
    dir="$out/gateway/$suite_"
    mkdir -p "$dir"
    log="$dir/$scenario.log"
    case "$suite_" in
    0.1.16) node "${node_flags[@]}" "$pkg/dist/index.js" server --url "$proxy_url" --scenario "$scenario" -o "$dir" >"$log" 2>&1 </dev/null ;;
    *) node "${node_flags[@]}" "$next_pkg/dist/index.js" server --url "$proxy_url" --scenario "$scenario" --spec-version "$suite_" \
      --expected-failures "$gateway_expected" -o "$dir" >"$log" 2>&1 </dev/null ;;
    esac
    local status=$?
    counts=$(node "$root/conformance/gateway.mjs" counts "$dir" "$scenario" "$gateway_expected" 2>&1) || status=1
    if [ -n "$expect" ] && [ $status -eq 0 ]; then
      counts="$counts; $(node "$root/conformance/gateway.mjs" expect "$dir" "$scenario" "${expect%%=*}" "${expect#*=}" 2>&1)" || status=1
    fi
    if [ $status -eq 0 ]; then
      printf '  pass  %-10s  %-32s  %s\n' "$suite_" "$scenario" "$counts"
      passed+=("$scenario")
    else
      printf '  FAIL  %-10s  %-32s  %s (log: %s)\n' "$suite_" "$scenario" "$counts" "$log" >&2
      failed+=("$suite_ $scenario")
    fi
  done 3< <(sed -e 's/#.*//' "$gateway_table" | awk 'NF >= 3')
  for s in "${waiting[@]}"; do
    printf '  wait  %s: the gateway does not declare it yet\n' "$s"
  done
  [ ${#fixture[@]} -eq 0 ] || echo "  not run, they need the suite's reference server (${#fixture[@]}): ${fixture[*]}"
  [ ${#extension[@]} -eq 0 ] || echo "  not run, extensions the gateway does not offer (${#extension[@]}): ${extension[*]}"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "conformance: gateway scenarios failed: ${failed[*]} (details in $out/gateway; the end of the gateway log, -v, below)" >&2
    tail -n 300 "$gw_home/gateway.log" >&2
    return 1
  fi
  stop_gateway
  echo "conformance: gateway suite passed: ${#passed[@]} scenarios; ${#waiting[@]} wait for a capability, ${#fixture[@]} need the suite's reference server, ${#extension[@]} extensions"
}

mkdir -p bin
go build -o bin/hermes-transport-http ./plugins/http
go build -o bin/hermes-auth-oauth ./plugins/oauth
CGO_ENABLED=0 go build -o bin/confclient ./internal/confclient

out="$root/results-conformance"
rm -rf "$out"
suite=(node "${node_flags[@]}" "$pkg/dist/index.js" client --command "$root/bin/confclient" -o "$out")
next_suite=(node "${node_flags[@]}" "$next_pkg/dist/index.js" client --command "$root/bin/confclient" -o "$out/2026-07-28")
if [ "${NEXT:-}" = 1 ]; then
  suite=("${next_suite[@]}")
fi

if [ "${1:-}" = --server ]; then
  shift
  run_server_suite "$@" || exit 1
  exit 0
fi
if [ "${1:-}" = --gateway ]; then
  shift
  run_gateway_suite "$@" || exit 1
  exit 0
fi

if [ $# -eq 0 ]; then
  # Every client scenario, OAuth and the authorization extensions
  # included (through hermes-auth-oauth). Any failure not in
  # conformance/expected-failures.yml, or a listed scenario that now
  # passes, fails the run.
  # Each part runs whatever the one before gave; the run fails at the end
  # when any part failed.
  status=0
  echo "== conformance client suite: all ($version)"
  if "${suite[@]}" --suite all --expected-failures "$root/conformance/expected-failures.yml"; then
    echo "conformance: client suite passed (every scenario, extensions included)"
  else
    echo "conformance: client suite FAILED (details in $out)" >&2
    status=1
  fi
  echo "== conformance client suite ($version): checks per scenario"
  node "$root/conformance/counts.mjs" "$out" 2026-07-28
  # Every scenario the current revision requires, and its extensions; the
  # same rule for the expected failures (none today).
  echo "== conformance client requirements: 2026-07-28 ($next_version)"
  if "${next_suite[@]}" --requirements 2026-07-28 --expected-failures "$root/conformance/expected-failures-2026-07-28.yml"; then
    echo "conformance: 2026-07-28 requirements passed (every scenario, the authorization extensions included)"
  else
    echo "conformance: 2026-07-28 client requirements FAILED (details in $out/2026-07-28)" >&2
    status=1
  fi
  echo "== conformance client requirements 2026-07-28 ($next_version): checks per scenario"
  node "$root/conformance/counts.mjs" "$out/2026-07-28"
  run_server_suite || status=1
  run_gateway_suite || status=1
  exit $status
fi

failed=()
for s in "$@"; do
  echo "== conformance client scenario: $s"
  "${suite[@]}" --scenario "$s" || failed+=("$s")
done
echo "== checks per scenario"
node "$root/conformance/counts.mjs" "$out"
if [ ${#failed[@]} -gt 0 ]; then
  echo "conformance: failed scenarios: ${failed[*]} (details in $out)" >&2
  exit 1
fi
echo "conformance: $# scenarios passed"
