// Bundles the extension (Node, CommonJS, `vscode` external) in two parts, and the chat webview
// script (browser IIFE with marked + highlight.js inside: the webview loads nothing remote).
// The activation bundle (dist/extension.js) is what the extension host compiles before it can
// call activate(); the language client (dist/languageClient.js, see src/languageClient.ts) is
// required by the daemon once activation has returned. The activation bundle takes from
// node_modules only the packages listed below: the build fails when it would take another, so a
// stray import cannot bring the language client (or anything else large) back into the host's
// start-up (docs/benchmarks.md).
import * as esbuild from 'esbuild';
import { builtinModules } from 'node:module';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

const common = { bundle: true, minify: production, sourcemap: !production, logLevel: 'info' };
// `import * as vscode from 'vscode'` compiles to `__toESM(require('vscode'))`, which copies every
// one of the API's ~200 properties, in every module that imports it, while the bundle loads (and
// the same for `fs`, `os`, `path`): a third of the activation bundle's load time. This routes each
// import of `vscode` or a Node built-in through one module per name that re-exports it, so each
// is copied once. `require()` calls (vscode-languageclient's) stay as they are.
const runtimeModules = new Set(['vscode', ...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const importOnce = {
  name: 'import-runtime-modules-once',
  setup(build) {
    build.onResolve({ filter: /^[\w:/]+$/ }, (a) => {
      if (!runtimeModules.has(a.path)) return undefined;
      if (a.namespace === 'import-once') return { path: a.path, external: true };
      return a.kind === 'import-statement' ? { path: a.path, namespace: 'import-once' } : { path: a.path, external: true };
    });
    build.onLoad({ filter: /.*/, namespace: 'import-once' }, (a) => {
      const name = JSON.stringify(a.path);
      return { contents: `export * from ${name};\nexport default require(${name});\n`, loader: 'js' };
    });
  },
};
const node = { ...common, platform: 'node', format: 'cjs', target: 'node20', external: ['vscode'], plugins: [importOnce] };

// src/daemon.ts requires './languageClient.js' at run time; it is the other bundle, not a module to inline.
const lazyClient = {
  name: 'lazy-language-client',
  setup(build) {
    build.onResolve({ filter: /^\.\/languageClient\.js$/ }, () => ({ path: './languageClient.js', external: true }));
  },
};
// Packages the activation bundle may hold, each small and needed before activate() returns.
const activationPackages = new Set([
  '@vscode/l10n', // 4.5 KB: l10n.t in src/pure/, configured from vscode.l10n.bundle at activation
]);
const packageOf = (input) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
  return m ? m[1] : undefined;
};
const activationOnly = {
  name: 'activation-bundle-check',
  setup(build) {
    build.onEnd((result) => {
      if (!result.metafile) return;
      const heavy = Object.keys(result.metafile.inputs).filter((f) => packageOf(f) && !activationPackages.has(packageOf(f)));
      if (!heavy.length) return undefined;
      const names = [...new Set(heavy.map(packageOf))].join(', ');
      return { errors: [{ text: `dist/extension.js must not include ${names} (load it from src/languageClient.ts, or list it in esbuild.mjs if activation needs it): ${heavy.slice(0, 3).join(', ')}${heavy.length > 3 ? ', …' : ''}` }] };
    });
  },
};

const builds = [
  // The banner stamps when the bundle starts loading, so activation can report its code-loading time.
  { ...node, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', metafile: true,
    plugins: [importOnce, lazyClient, activationOnly], banner: { js: 'globalThis.__agentdLoadStart = performance.now();' } },
  { ...node, entryPoints: ['src/languageClient.ts'], outfile: 'dist/languageClient.js' },
  { ...common, entryPoints: ['webview/main.ts'], outfile: 'dist/webview.js', platform: 'browser',
    format: 'iife', target: 'es2022' },
  { ...common, entryPoints: ['webview/style.css'], outfile: 'dist/webview.css', loader: { '.css': 'css' } },
];

if (watch) {
  for (const b of builds) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
