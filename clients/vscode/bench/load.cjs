// The extension's code-loading cost, the part of activation that blocks the extension host:
// requires the production bundle (dist/extension.js) with a stub `vscode` module in a fresh Node
// process per sample, and prints the median wall and CPU (user + system) time. The e2e run
// measures the whole activation in a real VS Code (artifacts/activation.json); this isolates the
// load from the host's own work, and CPU time from a busy machine's waiting for a core.
// Usage: node esbuild.mjs --production && node bench/load.cjs [samples]
const { execFileSync } = require('child_process');
const path = require('path');

if (process.argv[2] === '--child') {
  const Module = require('module');
  const orig = Module._load;
  const stub = new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : stub), apply: () => stub, construct: () => stub });
  Module._load = function (req, ...rest) { return req === 'vscode' ? stub : orig.call(this, req, ...rest); };
  const file = process.argv[3];
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  require(file);
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  process.stdout.write(JSON.stringify({ wall, cpu: (c.user + c.system) / 1000 }));
  return;
}

const n = Number(process.argv[2] || 15);
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const run = (file) => {
  const r = [];
  for (let i = 0; i < n; i++) r.push(JSON.parse(execFileSync(process.execPath, [__filename, '--child', file], { encoding: 'utf8' })));
  return { wall: median(r.map((x) => x.wall)).toFixed(1), cpu: median(r.map((x) => x.cpu)).toFixed(1) };
};
const empty = path.join(require('os').tmpdir(), 'agentd-bench-empty.js');
require('fs').writeFileSync(empty, 'module.exports = 1;\n');
console.log(`dist/extension.js load, median of ${n}: ${JSON.stringify(run(path.resolve(__dirname, '../dist/extension.js')))} ms`);
console.log(`an empty module (the floor), median of ${n}: ${JSON.stringify(run(empty))} ms`);
