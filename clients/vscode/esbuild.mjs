// Bundles the extension (Node, CommonJS, `vscode` external) and the chat webview script
// (browser IIFE with marked + highlight.js inside: the webview loads nothing remote).
import * as esbuild from 'esbuild';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = { bundle: true, minify: production, sourcemap: !production, logLevel: 'info' };
const builds = [
  // The banner stamps when the bundle starts loading, so activation can report its code-loading time.
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', platform: 'node',
    format: 'cjs', target: 'node20', external: ['vscode'], banner: { js: 'globalThis.__agentdLoadStart = performance.now();' } },
  { ...common, entryPoints: ['webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser',
    format: 'iife', target: 'es2022' },
  { ...common, entryPoints: ['webview/style.css'], outfile: 'dist/webview.css', loader: { '.css': 'css' } },
];

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
