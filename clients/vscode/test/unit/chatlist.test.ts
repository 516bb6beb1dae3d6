import { test } from 'node:test';
import assert from 'node:assert/strict';
import { afterClose, chatList, chatOfSession, chatTitle, HeldUpdates, historyRows, isBlank, OpenChat, waiting } from '../../src/pure/chatlist';
import { ChatState, Event, initialState, reduce } from '../../src/pure/viewmodel';

const run = (events: Event[], s: ChatState = initialState()) => events.reduce(reduce, s);
const chat = (id: string, created: number, events: Event[]): OpenChat => ({ id, created, state: run(events) });
const asked: Event = {
  type: 'permissionAsked', requestId: 'r1',
  params: { sessionId: 's1', toolCall: { title: 'Edit a.txt' }, options: [{ optionId: 'allow_once', kind: 'allow_once' }] },
};

test('a chat is named by agentd title, else by its first prompt, else left for the UI to name', () => {
  assert.equal(chatTitle(run([{ type: 'reset', sessionId: 's1' }])), '');
  const prompted = run([{ type: 'reset', sessionId: 's1' }, { type: 'promptSent', promptId: 'p1', text: 'Fix\n the   tests' }]);
  assert.equal(chatTitle(prompted), 'Fix the tests');
  const titled = reduce(prompted, { type: 'update', sessionId: 's1', update: { sessionUpdate: 'session_info_update', title: 'Test fixes' } });
  assert.equal(chatTitle(titled), 'Test fixes');
  const long = run([{ type: 'promptSent', promptId: 'p1', text: 'x'.repeat(200) }]);
  assert.equal(chatTitle(long).length, 60);
  assert.ok(chatTitle(long).endsWith('…'));
});

test('the list is newest first and marks the current, running and waiting chats', () => {
  const a = chat('a', 1, [{ type: 'reset', sessionId: 's1' }, { type: 'promptSent', promptId: 'p1', text: 'long job' }, asked]);
  const b = chat('b', 2, [{ type: 'reset', sessionId: 's2' }, { type: 'promptSent', promptId: 'p2', text: 'quick' }, { type: 'turnEnded', promptId: 'p2', stopReason: 'end_turn' }]);
  const c = chat('c', 3, [{ type: 'reset', sessionId: 's3' }]);
  const list = chatList([a, b, c], 'b');
  assert.deepEqual(list.map((e) => e.id), ['c', 'b', 'a']);
  assert.deepEqual(list.map((e) => [e.running, e.waiting, e.current]), [[false, false, false], [false, false, true], [true, true, false]]);
  // Answering the request clears the mark; the turn still runs.
  a.state = reduce(a.state, { type: 'permissionAnswered', requestId: 'r1', answer: 'Allow once' });
  assert.equal(waiting(a.state), false);
  assert.equal(chatList([a], undefined)[0].running, true);
});

test('New chat reuses a blank chat only', () => {
  assert.equal(isBlank(run([{ type: 'reset', sessionId: 's1' }])), true);
  assert.equal(isBlank(run([{ type: 'reset', sessionId: 's1' }, { type: 'notice', severity: 'warning', title: 'agentd restarted' }])), true);
  assert.equal(isBlank(run([{ type: 'promptSent', promptId: 'p1', text: 'hi' }])), false);
  const ended = run([{ type: 'promptSent', promptId: 'p1', text: 'hi' }, { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn' }]);
  assert.equal(isBlank(ended), false);
});

test('closing a chat shows the next older one, else the next newer one', () => {
  const cs = [chat('a', 1, []), chat('b', 2, []), chat('c', 3, [])];
  assert.equal(afterClose(cs, 'c'), 'b');
  assert.equal(afterClose(cs, 'b'), 'a');
  assert.equal(afterClose(cs, 'a'), 'b');
  assert.equal(afterClose([cs[0]], 'a'), undefined);
});

test('updates go to the chat that holds their session, never to another', () => {
  const a = chat('a', 1, [{ type: 'reset', sessionId: 's1' }]);
  const b = chat('b', 2, [{ type: 'reset', sessionId: 's2' }]);
  const fresh = chat('c', 3, []);
  assert.equal(chatOfSession([a, b, fresh], 's2'), b);
  assert.equal(chatOfSession([a, b, fresh], 's9'), undefined);
  // A chat still waiting for its session is not a catch-all.
  assert.equal(chatOfSession([fresh], undefined), undefined);
  assert.equal(chatOfSession([fresh], 's1'), undefined);
});

test('updates for a session no chat holds yet wait for it, in order and within bounds', () => {
  const h = new HeldUpdates<number>(2, 3);
  h.hold('s1', 1); h.hold('s1', 2); h.hold('s2', 9);
  assert.deepEqual(h.take('s1'), [1, 2]);
  assert.deepEqual(h.take('s1'), [], 'taken once');
  h.hold('s3', 7); h.hold('s4', 8);
  assert.equal(h.size, 2, 'the oldest session is forgotten');
  assert.deepEqual(h.take('s2'), []);
  for (let i = 0; i < 10; i++) h.hold('s4', i);
  assert.deepEqual(h.take('s4'), [8, 0, 1]);
});

test('the chat history: names given by the user, search by every word, newest first', () => {
  const list = [
    { sessionId: 's1', title: 'Fix the parser', updatedAt: '2026-12-01T10:00:00Z' },
    { sessionId: 's2', title: 'Write docs', updatedAt: '2026-12-02T10:00:00Z' },
    { sessionId: 's3', updatedAt: '2026-11-30T10:00:00Z' },
    { bogus: true }, null,
  ];
  assert.deepEqual(historyRows(list, {}).map((s) => s.sessionId), ['s2', 's1', 's3']);
  assert.deepEqual(historyRows(list, { s3: 'Parser tests' }, 'PARSER').map((s) => s.sessionId), ['s1', 's3']);
  assert.equal(historyRows(list, { s3: 'Parser tests' }).find((s) => s.sessionId === 's3')?.title, 'Parser tests');
  assert.deepEqual(historyRows(list, {}, 'fix parser').map((s) => s.sessionId), ['s1']);
  assert.deepEqual(historyRows(list, {}, 'nothing like it'), []);
  assert.deepEqual(historyRows('garbage', {}), []);
});
