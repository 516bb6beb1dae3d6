import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addChip, applyMention, blocksOf, fileChip, mentionAt, rangeChip } from '../../src/pure/mentions';

test('a mention is found only where a word starts with @ or #', () => {
  assert.deepEqual(mentionAt('look at @src/ma', 15), { start: 8, sigil: '@', query: 'src/ma' });
  assert.deepEqual(mentionAt('#', 1), { start: 0, sigil: '#', query: '' });
  assert.equal(mentionAt('mail me@example', 15), undefined);
  assert.equal(mentionAt('@abc def', 8), undefined);
  // Only up to the caret.
  assert.deepEqual(mentionAt('@abc def', 3), { start: 0, sigil: '@', query: 'ab' });
});

test('choosing a mention replaces what was typed and keeps the rest', () => {
  assert.deepEqual(applyMention('explain @ma please', 11, 'main.go'), { text: 'explain @main.go  please', caret: 17 });
  assert.equal(applyMention('no mention', 10, 'x'), undefined);
});

test('chips become the prompt blocks, once each', () => {
  const f = fileChip('file:///w/a.txt', 'a.txt');
  const sel = rangeChip('selection', 'file:///w/a.txt', 'a.txt', 2, 4, 'two\nthree\nfour');
  let chips = addChip([], f);
  chips = addChip(chips, sel);
  chips = addChip(chips, f);
  assert.deepEqual(chips.map((c) => c.label), ['a.txt:2-4', 'a.txt']);
  assert.deepEqual(blocksOf(chips), [
    { type: 'resource', resource: { uri: 'file:///w/a.txt#L2-4', text: 'two\nthree\nfour', mimeType: 'text/plain' } },
    { type: 'resource_link', uri: 'file:///w/a.txt', name: 'a.txt' },
  ]);
  assert.equal(rangeChip('symbol', 'file:///w/m.go', 'Parse', 3, 9, 'func Parse() {}').label, 'Parse');
});
