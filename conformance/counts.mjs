// Prints the checks of each client scenario the conformance suite ran, from
// its results folder, and the totals:
//
//   node counts.mjs RESULTS_DIR [SKIP...]
//
// RESULTS_DIR holds one folder per scenario run (SCENARIO-TIMESTAMP/, with
// checks.json; auth scenarios one level down, in auth/); the newest run of
// each scenario counts. Folders named in SKIP (relative to RESULTS_DIR) are
// another suite's results and are left out. A scenario is clean when no
// check failed or warned. Exits 0: the suite's own exit status says
// whether the run passed against its expected failures.
import fs from "node:fs";
import path from "node:path";

const [dir, ...skip] = process.argv.slice(2);
if (!dir) {
  console.error("usage: node counts.mjs RESULTS_DIR [SKIP...]");
  process.exit(2);
}
const skipped = new Set(skip.map((s) => path.resolve(dir, s)));
const stamp = /-(\d{4}-\d{2}-\d{2}T[\d-]+Z)$/;

// runs maps a scenario to its newest run: { stamp, checks }.
const runs = new Map();
function walk(d) {
  let entries;
  try {
    entries = fs.readdirSync(d, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    if (!e.isDirectory()) continue;
    const full = path.join(d, e.name);
    if (skipped.has(full)) continue;
    const m = e.name.match(stamp);
    const file = path.join(full, "checks.json");
    if (m && fs.existsSync(file)) {
      const scenario = path.relative(dir, full).replace(stamp, "").split(path.sep).join("/");
      const prev = runs.get(scenario);
      if (!prev || prev.stamp < m[1]) {
        let checks = [];
        try {
          checks = JSON.parse(fs.readFileSync(file, "utf8"));
        } catch (err) {
          console.error(`counts.mjs: ${file}: ${err.message}`);
        }
        runs.set(scenario, { stamp: m[1], checks });
      }
      continue;
    }
    walk(full);
  }
}
walk(path.resolve(dir));

let clean = 0;
let passed = 0;
let scored = 0;
const width = Math.max(10, ...[...runs.keys()].map((s) => s.length));
for (const scenario of [...runs.keys()].sort()) {
  const n = { passed: 0, failed: 0, warnings: 0, skipped: 0 };
  for (const c of runs.get(scenario).checks) {
    if (c.status === "SUCCESS") n.passed++;
    else if (c.status === "FAILURE") n.failed++;
    else if (c.status === "WARNING") n.warnings++;
    else if (c.status === "SKIPPED") n.skipped++;
  }
  const total = n.passed + n.failed + n.warnings;
  const ok = n.failed === 0 && n.warnings === 0;
  if (ok) clean++;
  passed += n.passed;
  scored += total;
  const parts = [`${n.passed}/${total} passed`];
  if (n.failed) parts.push(`${n.failed} failed`);
  if (n.warnings) parts.push(`${n.warnings} warnings`);
  if (n.skipped) parts.push(`${n.skipped} skipped`);
  console.log(`  ${ok ? "clean" : "NOT  "}  ${scenario.padEnd(width)}  ${parts.join(", ")}`);
}
console.log(`  ${clean} of ${runs.size} scenarios clean, ${passed} of ${scored} checks passed`);
