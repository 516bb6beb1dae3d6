// The extension's code-loading cost: requires the production bundles with a stub `vscode` module
// (an object with the API's ~200 top-level names) in a fresh Node process per sample, and prints the median wall and CPU (user + system) time of
// each. dist/extension.js is what the extension host compiles before it can call activate() (the
// part of activation that blocks the host's start-up); dist/languageClient.js is required in the
// same process right after it, as the daemon does once activation has returned. The e2e run
// measures both in a real VS Code (artifacts/activation.json); this isolates the load from the
// host's own work, and CPU time from a busy machine's waiting for a core. Node's built-in modules
// that VS Code's extension host has loaded before any extension (its extensionHostProcess.js
// imports them) are loaded first, untimed: `crypto` alone would add 5-8 ms of CPU that no
// extension pays in the host.
// Usage: node esbuild.mjs --production && node bench/load.cjs [samples] [bundle.js ...]
//   (bundles given: time those instead, one after the other in each process)
const { execFileSync } = require('child_process');
const path = require('path');

// What code-server 4.100.3's out/vs/workbench/api/node/extensionHostProcess.js imports, plus path.
const HOST_BUILTINS = ['assert', 'child_process', 'crypto', 'events', 'fs', 'fs/promises', 'http', 'net', 'os', 'path',
  'stream', 'string_decoder', 'url', 'util', 'zlib'];

if (process.argv[2] === '--child') {
  const Module = require('module');
  const orig = Module._load;
  const stub = new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : stub), apply: () => stub, construct: () => stub });
  // The API object has the real one's top-level names (what an `import * as vscode` copies).
  const api = Object.fromEntries(JSON.parse(process.env.AGENTD_BENCH_VSCODE_NAMES).map((n) => [n, stub]));
  Module._load = function (req, ...rest) { return req === 'vscode' ? api : orig.call(this, req, ...rest); };
  for (const m of HOST_BUILTINS) require(m);
  const out = [];
  for (const file of process.argv.slice(3)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    require(file);
    const wall = performance.now() - t0;
    const c = process.cpuUsage(c0);
    out.push({ wall, cpu: (c.user + c.system) / 1000 });
  }
  process.stdout.write(JSON.stringify(out));
  return;
}

const dts = require('fs').readFileSync(path.join(__dirname, '../node_modules/@types/vscode/index.d.ts'), 'utf8');
const names = [...new Set([...dts.matchAll(/^\texport (?:namespace|class|enum|function|const|let|var) (\w+)/gm)].map((m) => m[1]))];
if (names.length < 100) throw new Error(`only ${names.length} names found in @types/vscode`);
const env = { ...process.env, AGENTD_BENCH_VSCODE_NAMES: JSON.stringify(names) };

const n = Number(process.argv[2] || 15);
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const run = (files) => {
  const r = [];
  for (let i = 0; i < n; i++) r.push(JSON.parse(execFileSync(process.execPath, [__filename, '--child', ...files], { encoding: 'utf8', env })));
  return files.map((f, j) => ({ file: f, wall: median(r.map((x) => x[j].wall)).toFixed(1), cpu: median(r.map((x) => x[j].cpu)).toFixed(1) }));
};
const dist = path.resolve(__dirname, '../dist');
const given = process.argv.slice(3).map((f) => path.resolve(f));
const files = given.length ? given : [path.join(dist, 'extension.js'), path.join(dist, 'languageClient.js')];
const empty = path.join(require('os').tmpdir(), 'agentd-bench-empty.js');
require('fs').writeFileSync(empty, 'module.exports = 1;\n');
for (const r of run(files)) console.log(`${path.relative(process.cwd(), r.file)} load, median of ${n}: ${JSON.stringify({ wall: r.wall, cpu: r.cpu })} ms`);
const [floor] = run([empty]);
console.log(`an empty module (the floor), median of ${n}: ${JSON.stringify({ wall: floor.wall, cpu: floor.cpu })} ms`);
