import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hunks, keepHunk, offsetOfLine, splitLines, undoHunk } from '../../src/pure/hunks';

test('lines keep their terminators and join back to the text', () => {
  for (const t of ['', 'a', 'a\n', 'a\r\nb', 'a\n\nb\n']) assert.equal(splitLines(t).join(''), t);
  assert.deepEqual(splitLines('a\r\nb'), ['a\r\n', 'b']);
});

test('two separate edits are two hunks with their positions', () => {
  const a = 'one\ntwo\nthree\nfour\nfive\nsix\n';
  const b = 'one\nTWO\nthree\nfour\nfive\nsix\nseven\n';
  const hs = hunks(a, b);
  assert.deepEqual(hs, [
    { oldStart: 1, oldLines: ['two\n'], newStart: 1, newLines: ['TWO\n'] },
    { oldStart: 6, oldLines: [], newStart: 6, newLines: ['seven\n'] },
  ]);
  assert.equal(offsetOfLine(splitLines(b), 1), 4);
  assert.deepEqual(hunks(a, a), []);
});

test('undoing one hunk and keeping the other leaves only the kept change, reviewed', () => {
  const a = 'alpha\nbeta\ngamma\ndelta\nepsilon\n';
  const b = 'alpha\nBETA\ngamma\ndelta\nEPSILON\nzeta\n';
  const [h1, h2] = hunks(a, b);
  const now = undoHunk(b, h1);
  assert.equal(now, 'alpha\nbeta\ngamma\ndelta\nEPSILON\nzeta\n');
  // The second hunk, recomputed against the new text, is the same change; keeping it ends the review.
  const [k] = hunks(a, now);
  assert.deepEqual(k.newLines, h2.newLines);
  const base = keepHunk(a, k);
  assert.equal(base, now);
  assert.deepEqual(hunks(base, now), []);
});

test('a created file is one hunk from nothing, and a lost final newline is a change', () => {
  assert.deepEqual(hunks('', 'x\ny\n'), [{ oldStart: 0, oldLines: [], newStart: 0, newLines: ['x\n', 'y\n'] }]);
  assert.deepEqual(hunks('x\ny\n', 'x\ny'), [{ oldStart: 1, oldLines: ['y\n'], newStart: 1, newLines: ['y'] }]);
  assert.equal(undoHunk('x\ny', hunks('x\ny\n', 'x\ny')[0]), 'x\ny\n');
});

test('a very large rewrite is one hunk, not a slow walk', () => {
  const a = Array.from({ length: 3000 }, (_, i) => `a${i}\n`).join('');
  const b = Array.from({ length: 3000 }, (_, i) => `b${i}\n`).join('');
  const hs = hunks(a, b);
  assert.equal(hs.length, 1);
  assert.equal(undoHunk(b, hs[0]), a);
});
