import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inlineItems } from '../../src/pure/inline';

test('inline completion results become items; malformed ones and whitespace are dropped', () => {
  assert.deepEqual(inlineItems({ items: [{ insertText: 'world()' }] }), [{ text: 'world()', snippet: false }]);
  assert.deepEqual(inlineItems([{ insertText: 'x' }]), [{ text: 'x', snippet: false }], 'a bare array');
  assert.deepEqual(inlineItems({ items: [{ insertText: { kind: 'snippet', value: 'f($1)' } }] }), [{ text: 'f($1)', snippet: true }]);
  const range = { start: { line: 1, character: 2 }, end: { line: 1, character: 4 } };
  assert.deepEqual(inlineItems({ items: [{ insertText: 'ab', range }] }), [{ text: 'ab', snippet: false, range }]);
  assert.deepEqual(inlineItems({ items: [{ insertText: 'ab', range: { start: { line: -1, character: 0 }, end: range.end } }] }), [{ text: 'ab', snippet: false }], 'a bad range is ignored');
  for (const bad of [null, undefined, 'x', 42, {}, { items: 'x' }, { items: [null, 3, {}, { insertText: 7 }, { insertText: '  \n' }, { insertText: { kind: 'plaintext', value: 'x' } }] }]) {
    assert.deepEqual(inlineItems(bad), [], JSON.stringify(bad));
  }
});
