// The English bundles are complete: every %key% of package.json is in package.nls.json, and every
// vscode.l10n.t('…') message in the extension's code is in l10n/bundle.l10n.json (the bundle a
// translation starts from, as `npx @vscode/l10n-dev export src` would write it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';

const ext = path.resolve(__dirname, '../../..');
const read = (p: string) => fs.readFileSync(path.join(ext, p), 'utf8');

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.ts$/.test(e.name) ? [p] : [];
  });
}

/** The first argument of every l10n.t call, when it is a plain string literal. */
export function messagesIn(code: string): { messages: string[]; dynamic: number } {
  const messages: string[] = [];
  let dynamic = 0;
  const re = /l10n\.t\(\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(`|[^'"\s]))/g;
  for (const m of code.matchAll(re)) {
    if (m[3] !== undefined) { dynamic++; continue; }
    messages.push((m[1] ?? m[2]).replace(/\\(.)/g, '$1'));
  }
  return { messages, dynamic };
}

test('every %key% in package.json has its English text in package.nls.json', () => {
  const nls = JSON.parse(read('package.nls.json'));
  const keys = [...read('package.json').matchAll(/"%([^%"]+)%"/g)].map((m) => m[1]);
  assert.ok(keys.length > 20, `only ${keys.length} localized manifest strings`);
  assert.deepEqual(keys.filter((k) => typeof nls[k] !== 'string' || !nls[k]), []);
  // And nothing stale: every English text is used.
  assert.deepEqual(Object.keys(nls).filter((k) => !keys.includes(k)), []);
});

test('every vscode.l10n.t message is in the English bundle, and only literals are passed', () => {
  const bundle = JSON.parse(read('l10n/bundle.l10n.json'));
  const used = new Set<string>();
  for (const f of sources(path.join(ext, 'src'))) {
    const { messages, dynamic } = messagesIn(fs.readFileSync(f, 'utf8'));
    assert.equal(dynamic, 0, `${path.relative(ext, f)}: l10n.t takes a literal message (placeholders {0}), not a computed one`);
    messages.forEach((m) => used.add(m));
  }
  assert.ok(used.size > 10);
  assert.deepEqual([...used].filter((m) => bundle[m] !== m), []);
  assert.deepEqual(Object.keys(bundle).filter((m) => !used.has(m)), [], 'stale entries in l10n/bundle.l10n.json');
});

test('the message scanner sees literals and refuses computed messages', () => {
  assert.deepEqual(messagesIn(`vscode.l10n.t('a {0}', x); l10n.t("it's"); vscode.l10n.t('don\\'t')`), { messages: ['a {0}', "it's", "don't"], dynamic: 0 });
  assert.equal(messagesIn('vscode.l10n.t(`x ${y}`)').dynamic, 1);
});
