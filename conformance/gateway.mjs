// Helpers of conformance/run.sh for the gateway's server suite; no
// dependencies beyond Node 20.
//
//   node gateway.mjs capabilities URL
//       initializes a 2025-11-25 session at URL and prints the capabilities
//       the server declares, space-separated (e.g. "tools logging")
//   node gateway.mjs counts RESULTS_DIR SCENARIO [EXPECTED_FAILURES_YML]
//       prints the checks of the scenario's newest result in RESULTS_DIR:
//       "3 passed, 1 failed as expected, 2 skipped"
//   node gateway.mjs expect RESULTS_DIR SCENARIO CHECK STATUS
//       exits 1, saying why, unless the scenario's CHECK ended with STATUS
import fs from "node:fs";
import path from "node:path";

const [cmd, ...args] = process.argv.slice(2);

function fail(msg) {
  console.error(`gateway.mjs: ${msg}`);
  process.exit(1);
}

// newest is the checks of the scenario's newest result folder.
function newest(dir, scenario) {
  const prefix = `server-${scenario}-`;
  let names;
  try {
    names = fs.readdirSync(dir).filter((n) => n.startsWith(prefix) && /^\d{4}-/.test(n.slice(prefix.length)));
  } catch (e) {
    fail(`no results in ${dir}: ${e.message}`);
  }
  names.sort();
  if (names.length === 0) fail(`no result of ${scenario} in ${dir}`);
  return JSON.parse(fs.readFileSync(path.join(dir, names[names.length - 1], "checks.json"), "utf8"));
}

async function capabilities(url) {
  const res = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "hermes-conformance-runner", version: "1" } },
    }),
  });
  const text = await res.text();
  if (!res.ok) fail(`initialize at ${url}: HTTP ${res.status}: ${text.slice(0, 200)}`);
  // A JSON body, or server-sent events whose data lines carry the answer.
  let body = text;
  if ((res.headers.get("content-type") || "").startsWith("text/event-stream")) {
    body = text
      .split("\n")
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).trim())
      .find((l) => l.includes('"result"'));
  }
  let msg;
  try {
    msg = JSON.parse(body);
  } catch {
    fail(`initialize at ${url}: not JSON-RPC: ${text.slice(0, 200)}`);
  }
  if (!msg.result || typeof msg.result.capabilities !== "object") fail(`initialize at ${url}: no capabilities: ${text.slice(0, 200)}`);
  console.log(Object.keys(msg.result.capabilities).sort().join(" "));
}

function counts(dir, scenario, baseline) {
  const expected = new Set();
  if (baseline) {
    for (const m of fs.readFileSync(baseline, "utf8").matchAll(/^\s*-\s*([^\s#]+)/gm)) expected.add(m[1]);
  }
  const n = { passed: 0, failedExpected: 0, failed: 0, warnings: 0, skipped: 0 };
  for (const c of newest(dir, scenario)) {
    const listed = expected.has(scenario) || expected.has(`${scenario}:${c.id}`);
    switch (c.status) {
      case "SUCCESS":
        n.passed++;
        break;
      case "FAILURE":
      case "WARNING":
        if (listed) n.failedExpected++;
        else if (c.status === "FAILURE") n.failed++;
        else n.warnings++;
        break;
      case "SKIPPED":
        n.skipped++;
        break;
    }
  }
  const parts = [`${n.passed} passed`];
  if (n.failed) parts.push(`${n.failed} failed`);
  if (n.failedExpected) parts.push(`${n.failedExpected} failed as expected`);
  if (n.warnings) parts.push(`${n.warnings} warnings`);
  if (n.skipped) parts.push(`${n.skipped} skipped`);
  console.log(parts.join(", "));
}

function expect(dir, scenario, id, status) {
  const c = newest(dir, scenario).find((c) => c.id === id);
  if (!c) fail(`${scenario}: no check ${id}`);
  if (c.status !== status) fail(`${scenario}: check ${id} is ${c.status}, want ${status} (conformance/gateway-scenarios.txt): ${JSON.stringify(c.details ?? c.errorMessage ?? {})}`);
  const why = c.details?.message ?? "";
  console.log(`${id} ${status}${why ? `: ${why}` : ""}`);
}

switch (cmd) {
  case "capabilities":
    await capabilities(args[0]);
    break;
  case "counts":
    counts(args[0], args[1], args[2]);
    break;
  case "expect":
    expect(...args);
    break;
  default:
    fail(`unknown command ${cmd}: want capabilities, counts or expect`);
}
