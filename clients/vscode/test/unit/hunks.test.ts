import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffRows, hunkAt, hunkFrom, hunks, onlyRemovals, keepHunk, offsetOfLine, splitLines, undoHunk } from '../../src/pure/hunks';

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

// Issue 33 item 5: the card trimmed only the common start and end, so +6/−1 showed 22 lines.
test('the card diff shows the real hunks with one line of context, not the lines between them', () => {
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
  const a = lines.join('\n') + '\n';
  const changed = [...lines];
  changed[2] = 'LINE 3';
  changed.splice(17, 0, 'new a', 'new b', 'new c', 'new d', 'new e');
  const b = changed.join('\n') + '\n';
  const { rows, hidden } = diffRows(a, b);
  assert.equal(hidden, 0);
  const shown = rows.map((r) => `${r.kind} ${r.text}`);
  assert.deepEqual(shown, [
    'gap ',
    'ctx line 2', 'del line 3', 'add LINE 3', 'ctx line 4',
    'gap ',
    'ctx line 17', 'add new a', 'add new b', 'add new c', 'add new d', 'add new e', 'ctx line 18',
    'gap ',
  ]);
  assert.equal(rows.filter((r) => r.kind === 'add').length, 6);
  assert.equal(rows.filter((r) => r.kind === 'del').length, 1);
  assert.ok(!shown.includes('ctx line 10'), 'an unchanged line far from both changes is not shown');
});

test('card diff rows: close hunks share their context, a new file is all added, CRLF and the cap', () => {
  const { rows } = diffRows('a\nb\nc\nd\n', 'A\nb\nC\nd\n');
  assert.deepEqual(rows.map((r) => `${r.kind} ${r.text}`), ['del a', 'add A', 'ctx b', 'del c', 'add C', 'ctx d']);
  assert.deepEqual(diffRows('', 'x\ny\n').rows.map((r) => r.kind), ['add', 'add']);
  assert.deepEqual(diffRows('a\r\nb\r\n', 'a\r\nB\r\n').rows.map((r) => r.text), ['a', 'b', 'B']);
  const big = diffRows('', Array.from({ length: 500 }, (_, i) => `l${i}`).join('\n') + '\n', 1, 80);
  assert.equal(big.rows.length, 80);
  assert.equal(big.hidden, 420);
  assert.deepEqual(diffRows('same\n', 'same\n').rows, []);
});

test('onlyRemovals: a revert that dropped only the user\'s own line leaves nothing of the agent to review', () => {
  // Baseline: the buffer before the turn, with the user's unsaved "mine"; after the revert, the disk text.
  assert.equal(onlyRemovals(hunks('x1\nx2\nmine\n', 'x1\nx2\n')), true);
  assert.equal(onlyRemovals(hunks('x1\nx2\n', 'x1\nX2\n')), false);
  assert.equal(onlyRemovals(hunks('x1\n', 'x1\nnew\n')), false);
  assert.equal(onlyRemovals([]), true);
});

test('the hunk at a line, and the next and previous ones round the file', () => {
  const hs = hunks('a\nb\nc\nd\ne\nf\ng\n', 'a\nB\nc\nd\ne\nF\nF2\ng\n');
  assert.equal(hs.length, 2);
  assert.equal(hunkAt(hs, 0), undefined);
  assert.equal(hunkAt(hs, 1), hs[0]);
  assert.equal(hunkAt(hs, 6), hs[1]);
  assert.equal(hunkFrom(hs, 0, 1), hs[0]);
  assert.equal(hunkFrom(hs, 1, 1), hs[1]);
  assert.equal(hunkFrom(hs, 6, 1), hs[0], 'after the last, the first');
  assert.equal(hunkFrom(hs, 6, -1), hs[0]);
  assert.equal(hunkFrom(hs, 1, -1), hs[1], 'before the first, the last');
  assert.equal(hunkFrom([], 3, 1), undefined);
  // A removal (no new lines) is at the line where the removed lines were.
  const rm = hunks('a\nb\nc\n', 'a\nc\n');
  assert.equal(hunkAt(rm, 1), rm[0]);
});
