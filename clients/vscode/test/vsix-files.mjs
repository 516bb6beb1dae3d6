// Checks that a packaged .vsix holds the code it runs: the manifest's `main`, and every file the
// packaged bundles require by a relative path (dist/extension.js loads dist/languageClient.js
// only after activation, so a package without it would activate and then never start agentd).
// Usage: node test/vsix-files.mjs agentd.vsix   Prints "vsix-files: ok (N files)" or what is missing.
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const vsix = process.argv[2];
const list = new Set(execFileSync('unzip', ['-Z1', vsix], { encoding: 'utf8' }).split('\n').filter(Boolean));
const read = (f) => execFileSync('unzip', ['-p', vsix, f], { encoding: 'utf8', maxBuffer: 64 << 20 });
const manifest = JSON.parse(read('extension/package.json'));
const missing = [];
const main = path.posix.join('extension', manifest.main.endsWith('.js') ? manifest.main : `${manifest.main}.js`);
if (!list.has(main)) missing.push(`${main} (the manifest's main)`);
const code = [...list].filter((f) => /^extension\/dist\/.*\.js$/.test(f));
for (const f of code) {
  for (const m of read(f).matchAll(/\brequire\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g)) {
    let want = path.posix.join(path.posix.dirname(f), m[1]);
    if (!want.endsWith('.js') && !list.has(want)) want += '.js';
    if (!list.has(want)) missing.push(`${want} (required by ${f})`);
  }
}
if (missing.length) {
  console.log(`vsix-files: the package lacks code it runs:\n  ${missing.join('\n  ')}`);
  process.exit(1);
}
console.log(`vsix-files: ok (${code.length} files)`);
