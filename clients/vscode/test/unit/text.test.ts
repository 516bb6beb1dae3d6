import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selectionLines, sliceLines } from '../../src/pure/text';

const text = 'one\ntwo\nthree\nfour\n';

test('no line and no limit is the whole text', () => {
  assert.equal(sliceLines(text), text);
  assert.equal(sliceLines(text, null, null), text);
});

test('line is 1-based and limit counts lines', () => {
  assert.equal(sliceLines(text, 2, 2), 'two\nthree');
  assert.equal(sliceLines(text, 1, 1), 'one');
  assert.equal(sliceLines(text, 3), 'three\nfour\n');
  assert.equal(sliceLines(text, undefined, 2), 'one\ntwo');
});

test('ranges past the end are empty or clipped, never an error', () => {
  assert.equal(sliceLines(text, 99, 5), '');
  assert.equal(sliceLines(text, 4, 99), 'four\n');
  assert.equal(sliceLines('', 1, 1), '');
});

test('a selection ending at the start of a line does not include that line', () => {
  assert.deepEqual(selectionLines(2, 4, 0), { startLine: 3, endLine: 4 });
  assert.deepEqual(selectionLines(2, 4, 3), { startLine: 3, endLine: 5 });
  assert.deepEqual(selectionLines(0, 0, 0), { startLine: 1, endLine: 1 });
});
