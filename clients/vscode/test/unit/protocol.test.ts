// The method table is the contract: every name in it is in docs/protocol.md, and no other source
// file spells a method name out (so a rename in the table cannot miss a caller).
import { test } from 'node:test';
import * as assert from 'node:assert/strict';
import * as fs from 'fs';
import * as path from 'path';
import { allMethods, FromDaemon, ToDaemon } from '../../src/pure/protocol';

// out/test/unit → the extension's folder → the repository.
const ext = path.resolve(__dirname, '../../..');
const repo = path.resolve(ext, '../..');

// Methods another engineer is still documenting, if any. The test below fails once one of them
// is documented, so the list cannot go stale.
const NOT_YET_DOCUMENTED: string[] = [];

test('every method in the table is in docs/protocol.md', () => {
  const doc = fs.readFileSync(path.join(repo, 'docs/protocol.md'), 'utf8');
  const documented = (m: string) => doc.includes('`' + m + '`') || doc.includes('`' + m + ' ');
  assert.deepEqual(allMethods().filter((m) => !documented(m) && !NOT_YET_DOCUMENTED.includes(m)), []);
  assert.deepEqual(NOT_YET_DOCUMENTED.filter(documented), [], 'documented now: remove it from NOT_YET_DOCUMENTED');
});

test('method names are unique within each direction', () => {
  for (const t of [ToDaemon, FromDaemon]) {
    const v = Object.values(t);
    assert.equal(new Set(v).size, v.length);
  }
});

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.ts$/.test(e.name)) out.push(p);
  }
  return out;
}

test('no source file outside the table spells a method name in quotes', () => {
  const names = allMethods();
  const offenders: string[] = [];
  for (const f of [...sources(path.join(ext, 'src')), ...sources(path.join(ext, 'webview'))]) {
    if (f.endsWith(path.join('pure', 'protocol.ts'))) continue;
    const text = fs.readFileSync(f, 'utf8');
    for (const m of names) {
      if (text.includes(`'${m}'`) || text.includes(`"${m}"`)) offenders.push(`${path.relative(ext, f)}: ${m}`);
    }
  }
  assert.deepEqual(offenders, []);
});
