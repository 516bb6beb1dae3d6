// The extension's modules import one another without a circle (issue 27 item 8): a circle makes
// the load order decide which module sees the other half-built, and with two bundles it hid that
// the language client's bundle pulled the daemon's module in a second time. Type-only imports
// count too: they are the same arrow in the picture a reader draws.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

// out/test/unit → the package root.
const ROOT = path.resolve(__dirname, '..', '..', '..');
const DIRS = ['src', 'src/pure', 'webview'];

function modules(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const d of DIRS) {
    for (const f of fs.readdirSync(path.join(ROOT, d))) {
      if (!f.endsWith('.ts')) continue;
      const file = path.join(d, f);
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      const deps: string[] = [];
      for (const m of text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s+['"](\.[^'"]+)['"]/gm)) {
        deps.push(path.join(d, m[1].replace(/\.js$/, '')) + '.ts');
      }
      for (const m of text.matchAll(/\brequire\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
        deps.push(path.join(d, m[1].replace(/\.js$/, '')) + '.ts');
      }
      graph.set(file, deps);
    }
  }
  return graph;
}

/** Every circle in the graph, each as the list of modules it runs through. */
export function circles(graph: Map<string, string[]>): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string) => {
    state.set(n, 'open');
    stack.push(n);
    for (const m of graph.get(n) ?? []) {
      if (!graph.has(m)) continue;
      if (state.get(m) === 'open') found.push([...stack.slice(stack.indexOf(m)), m]);
      else if (!state.has(m)) visit(m);
    }
    stack.pop();
    state.set(n, 'done');
  };
  for (const n of graph.keys()) if (!state.has(n)) visit(n);
  return found;
}

test('the circle finder finds a circle it is shown', () => {
  const g = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
  assert.deepEqual(circles(g), [['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
});

test('the import picture of the source has its edges (the reader sees the real imports)', () => {
  const g = modules();
  assert.ok(g.get('src/extension.ts')?.includes('src/daemon.ts'), JSON.stringify(g.get('src/extension.ts')));
  assert.ok(g.get('src/daemon.ts')?.includes('src/languageClient.ts'), 'the type import of the client bundle is an edge');
});

test('no module imports itself back through others', () => {
  assert.deepEqual(circles(modules()).map((c) => c.join(' -> ')), []);
});
