import { test } from 'node:test';
import assert from 'node:assert/strict';
import { addChip, applyMention, blocksOf, fileChip, mcpMentions, mcpResourceChip, mentionAt, rangeChip } from '../../src/pure/mentions';

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

test('an MCP resource is mentioned as @server:uri and goes as a resource_link naming its server', () => {
  assert.deepEqual(mentionAt('see @notes:memo://a/b?x=1', 25), { start: 4, sigil: '@', query: 'notes:memo://a/b?x=1' });
  const servers = [
    { name: 'notes', resources: [{ uri: 'memo://plan', name: 'plan', title: 'The plan' }, { uri: 'memo://other', name: 'other' }] },
    // A server's text is untrusted: a uri with a space or a control character cannot be one
    // word, a name without a string is no server; neither is offered.
    { name: 'evil', resources: [{ uri: 'memo://a b' }, { uri: 'memo://x\u202eexe' }, { uri: 42 as any }, { uri: 'memo://ok', title: '<img src=x onerror=alert(1)>\u202e' }] },
    { name: 'sp ace', resources: [{ uri: 'memo://y' }] },
    { name: undefined as any, resources: [{ uri: 'memo://z' }] },
  ];
  const all = mcpMentions(servers, '');
  assert.deepEqual(all.map((x) => x.chip.label), ['notes:memo://plan', 'notes:memo://other', 'evil:memo://ok']);
  assert.deepEqual(all[0].chip.block, { type: 'resource_link', uri: 'memo://plan', name: 'plan', _meta: { 'agentd/mcpServer': 'notes' } });
  assert.equal(all[0].detail, 'The plan');
  // The detail is shown escaped by the view; hiding characters are made visible here.
  assert.equal(all[2].detail, '<img src=x onerror=alert(1)>\\u202e');
  assert.deepEqual(mcpMentions(servers, 'notes:memo://p').map((x) => x.chip.label), ['notes:memo://plan']);
  assert.deepEqual(mcpMentions(servers, 'OTHER').map((x) => x.chip.label), ['notes:memo://other']);
  assert.deepEqual(mcpMentions(undefined, ''), []);
  assert.equal(mcpMentions([{ name: 's', resources: Array.from({ length: 50 }, (_, k) => ({ uri: `m://${k}` })) }], '', 20).length, 20);
  // Two servers' same uri are two chips.
  assert.notEqual(mcpResourceChip('a', 'm://1').id, mcpResourceChip('b', 'm://1').id);
});
