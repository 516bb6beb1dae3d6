import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buttonLabel, buttonsFor, ChatState, Event, extrasText, feedbackOption, feedbackOutcome, initialState, optionForButton, quoteArgv, reduce, savesText, slashMatches, turnBaselines, usageText, costText, visible } from '../../src/pure/viewmodel';

const run = (events: Event[], s: ChatState = initialState()) => events.reduce(reduce, s);
const up = (update: any): Event => ({ type: 'update', sessionId: 's1', update });
const chunk = (kind: string, text: string, messageId = 'm1') => up({ sessionUpdate: kind, messageId, content: { type: 'text', text } });

test('streamed chunks join one reply; thinking ends when the reply starts', () => {
  const s = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'promptSent', promptId: 'p1', text: 'hi' },
    chunk('agent_thought_chunk', 'let me ', 't1'), chunk('agent_thought_chunk', 'think', 't1'),
    chunk('agent_message_chunk', 'Hel'), chunk('agent_message_chunk', 'lo'),
  ]);
  assert.equal(s.running, true);
  assert.deepEqual(s.items.map((i) => i.kind), ['user', 'thought', 'agent']);
  assert.equal((s.items[1] as any).text, 'let me think');
  assert.equal((s.items[1] as any).streaming, false);
  assert.equal((s.items[2] as any).text, 'Hello');
  assert.equal((s.items[2] as any).streaming, true);
  const done = reduce(s, { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn' });
  assert.equal(done.running, false);
  assert.equal((done.items[2] as any).streaming, false);
  assert.equal(done.items.length, 3, 'end_turn adds no notice');
});

test('updates for another session are ignored', () => {
  const s = run([{ type: 'reset', sessionId: 's1' }, { type: 'update', sessionId: 's2', update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'x' } } }]);
  assert.equal(s.items.length, 0);
});

test('a tool call moves through its statuses and keeps its diff', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'edit' },
    chunk('agent_message_chunk', 'Editing.'),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'edit_file a.txt', kind: 'edit', status: 'pending' }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'in_progress', rawInput: { path: 'a.txt' } }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', content: [{ type: 'diff', path: '/w/a.txt', oldText: 'a', newText: 'b' }] }),
    chunk('agent_message_chunk', 'Done.'),
  ]);
  assert.deepEqual(s.items.map((i) => i.kind), ['user', 'agent', 'tool', 'agent']);
  assert.equal((s.items[1] as any).streaming, false, 'a reply block stops streaming once a tool call follows it');
  const tool = s.items[2] as any;
  assert.equal(tool.status, 'completed');
  assert.equal(tool.toolKind, 'edit');
  assert.deepEqual(tool.diffs, [{ path: '/w/a.txt', oldText: 'a', newText: 'b' }]);
  assert.equal((s.items[3] as any).text, 'Done.', 'text after a tool call is a new block');
});

test('program output and command line are kept', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'run_program', kind: 'execute', status: 'pending', rawInput: { program: 'go', args: ['test', './...'], cwd: '/w' } }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c2', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'FAIL' } }] }),
  ]);
  const t = s.items[0] as any;
  assert.equal(t.command, 'go test ./...');
  assert.equal(t.cwd, '/w');
  assert.equal(t.output, 'FAIL');
  assert.equal(t.status, 'failed');
});

test('prompts sent during a turn are queued and start in order', () => {
  let s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'one' },
    { type: 'promptSent', promptId: 'p2', text: 'two' },
    { type: 'promptSent', promptId: 'p3', text: 'three' },
  ]);
  assert.deepEqual(s.queued.map((q) => q.text), ['two', 'three']);
  s = reduce(s, { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn' });
  assert.equal(s.running, true);
  assert.equal(s.activePromptId, 'p2');
  assert.deepEqual(s.queued.map((q) => q.text), ['three']);
  // agentd echoes a queued prompt as user_message_chunk when it starts: not shown twice.
  s = reduce(s, chunk('user_message_chunk', 'two', 'u2'));
  assert.equal(s.items.filter((i) => i.kind === 'user').length, 2);
});

test('a cancelled turn clears the queue, fails running tools and closes permission cards', () => {
  let s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'one' },
    { type: 'promptSent', promptId: 'p2', text: 'two' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'edit', status: 'pending' }),
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c1', title: 'edit a.txt' }, options: [{ optionId: 'allow_once', kind: 'allow_once' }] } },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'cancelled' },
  ]);
  assert.equal(s.running, false);
  assert.deepEqual(s.queued, []);
  assert.equal((s.items.find((i) => i.kind === 'tool') as any).status, 'failed');
  assert.equal((s.items.find((i) => i.kind === 'permission') as any).answer, 'cancelled');
  const titles = s.items.filter((i) => i.kind === 'notice').map((i: any) => i.title);
  assert.deepEqual(titles, ['Stopped.', 'Your queued prompt was not sent; it is back in the input.']);
  // The queued prompt is not dropped silently: its text goes back to the input.
  assert.equal(s.restored, 'two');
  // The queued prompt's own cancelled answer changes nothing.
  s = reduce(s, { type: 'turnEnded', promptId: 'p2', stopReason: 'cancelled' });
  assert.equal(s.running, false);
  assert.equal(s.restored, 'two');
  // Sending it again clears it.
  s = reduce(s, { type: 'promptSent', promptId: 'p3', text: 'two' });
  assert.equal(s.restored, undefined);
});

test('a queued prompt cancelled before the stopped turn answers also comes back, once', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'one' },
    { type: 'promptSent', promptId: 'p2', text: 'two' },
    { type: 'promptSent', promptId: 'p3', text: 'three' },
    { type: 'turnEnded', promptId: 'p2', stopReason: 'cancelled' },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'cancelled' },
    { type: 'turnEnded', promptId: 'p3', stopReason: 'cancelled' },
  ]);
  assert.equal(s.restored, 'two\n\nthree');
  assert.deepEqual(s.queued, []);
  assert.equal(s.items.filter((i: any) => i.kind === 'notice' && /queued/.test(i.title)).length, 1);
});

test('a stop with nothing queued gives nothing back', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'one' },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'cancelled' },
  ]);
  assert.equal(s.restored, undefined);
  assert.equal(s.items.filter((i) => i.kind === 'notice').length, 1);
});

test('the context meter keeps its value when a stopped model call reports no usage', () => {
  let s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'one' },
    up({ sessionUpdate: 'usage_update', used: 12000, size: 200000 }),
    { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn' },
    { type: 'promptSent', promptId: 'p2', text: 'two' },
    up({ sessionUpdate: 'usage_update', used: 0, size: 200000 }),
    { type: 'turnEnded', promptId: 'p2', stopReason: 'cancelled' },
  ]);
  assert.deepEqual(s.usage && [s.usage.used, s.usage.size], [12000, 200000]);
  s = reduce(s, up({ sessionUpdate: 'usage_update', used: 15000, size: 200000 }));
  assert.equal(s.usage?.used, 15000);
  // Before any real measurement a zero is shown as it is.
  assert.equal(run([{ type: 'reset', sessionId: 's1' }, up({ sessionUpdate: 'usage_update', used: 0, size: 1000 })]).usage?.used, 0);
});

test('replayed history (session/load) shows user messages', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    chunk('user_message_chunk', 'old question', 'u1'),
    chunk('agent_message_chunk', 'old answer', 'a1'),
  ]);
  assert.deepEqual(s.items.map((i: any) => [i.kind, i.text]), [['user', 'old question'], ['agent', 'old answer']]);
});

test('plan, usage, mode, config options, title and notices', () => {
  const opts = [
    { id: 'mode', name: 'Mode', category: 'mode', currentValue: 'ask', options: [{ value: 'ask', name: 'Ask' }, { value: 'auto', name: 'Auto' }] },
    { id: 'model', name: 'Model', category: 'model', currentValue: 'm1', options: [{ value: 'm1', name: 'M1' }] },
  ];
  let s = run([
    { type: 'reset', sessionId: 's1', configOptions: opts },
    up({ sessionUpdate: 'plan', entries: [{ content: 'read', priority: 'high', status: 'completed' }, { content: 'edit', priority: 'high', status: 'pending' }] }),
    up({ sessionUpdate: 'usage_update', used: 12345, size: 200000 }),
    up({ sessionUpdate: 'session_info_update', title: 'Fix bug' }),
    up({ sessionUpdate: 'notice', severity: 'warning', title: 'rate limited, retrying in 8 s' }),
  ]);
  assert.equal(s.mode, 'ask');
  assert.equal(s.plan.length, 2);
  assert.equal(s.title, 'Fix bug');
  assert.equal(usageText(s.usage), '12.3k / 200k (6%)');
  assert.equal((s.items[0] as any).severity, 'warning');
  s = reduce(s, up({ sessionUpdate: 'current_mode_update', modeId: 'auto' }));
  assert.equal(s.mode, 'auto');
  assert.equal(s.configOptions[0].currentValue, 'auto');
  s = reduce(s, { type: 'configOptions', configOptions: [{ ...opts[0], currentValue: 'plan' }, opts[1]] });
  assert.equal(s.mode, 'plan');
});

test('daemon going away ends the turn and keeps the transcript', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'x' },
    chunk('agent_message_chunk', 'partial'),
    { type: 'daemon', status: 'stopped', message: 'agentd exited' },
  ]);
  assert.equal(s.running, false);
  assert.equal(s.daemon.message, 'agentd exited');
  assert.equal(s.items.length, 2);
  // A reset (new chat) keeps the daemon status.
  assert.equal(reduce(s, { type: 'reset', sessionId: 's2' }).daemon.status, 'stopped');
});

test('provider errors end the turn with an error notice', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'x' },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn', error: 'invalid API key' },
  ]);
  assert.deepEqual(s.items.map((i: any) => [i.kind, i.severity, i.title]).slice(1), [['notice', 'error', 'invalid API key']]);
});

test('permission buttons map to the options agentd offered', () => {
  const options = [
    { optionId: 'allow_once', kind: 'allow_once' }, { optionId: 'allow_session', kind: 'allow_always' },
    { optionId: 'allow_always', kind: 'allow_always' }, { optionId: 'reject_once', kind: 'reject_once' },
    { optionId: 'reject_always', kind: 'reject_always' },
  ];
  assert.deepEqual(buttonsFor(options), ['allow_once', 'allow_session', 'allow_always', 'deny']);
  assert.deepEqual(buttonsFor(options).map(buttonLabel), ['Allow once', 'Allow for session', 'Always allow', 'Deny']);
  assert.equal(optionForButton(options, 'allow_once'), 'allow_once');
  assert.equal(optionForButton(options, 'allow_session'), 'allow_session');
  assert.equal(optionForButton(options, 'allow_always'), 'allow_always');
  assert.equal(optionForButton(options, 'deny'), 'reject_once');
  // Only what was offered, matched by kind when the ids differ.
  const few = [{ optionId: 'yes', kind: 'allow_once' }, { optionId: 'no', kind: 'reject_once' }];
  assert.deepEqual(buttonsFor(few), ['allow_once', 'deny']);
  assert.equal(optionForButton(few, 'deny'), 'no');
});

test('a permission request for a program shows the command and cwd', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'run_program', kind: 'execute', rawInput: { command: 'make test', cwd: '/w' } }, options: [] } },
    { type: 'permissionAnswered', requestId: 'r1', answer: 'deny' },
  ]);
  const p = s.items[0] as any;
  assert.equal(p.command, 'make test');
  assert.equal(p.cwd, '/w');
  assert.equal(p.answer, 'deny');
});

test('a program permission shows its argv quoted, its directory and what is saved first', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: {
      toolCallId: 'c', title: 'run_program', kind: 'execute',
      rawInput: { command: ['sh', '-c', "echo it's done; ls"], cwd: '/w' },
      _meta: { 'agentd/saves': [{ path: '/w/a.go', userChanges: false }, { path: '/w/b.go', userChanges: true }, { nope: 1 }] },
    }, options: [] } },
  ]);
  const p = s.items[0] as any;
  assert.equal(p.command, `sh -c 'echo it'\\''s done; ls'`);
  assert.equal(p.cwd, '/w');
  assert.deepEqual(p.saves, [{ path: '/w/a.go', userChanges: false }, { path: '/w/b.go', userChanges: true }]);
});

test('a command cannot hide text behind control or bidi characters', () => {
  // ESC[8m (conceal) would hide "; touch x" in a terminal; U+202E would reverse it.
  assert.equal(quoteArgv(['make', 'test\u001b[8m; touch x']), "make $'test\\x1b[8m; touch x'");
  assert.equal(quoteArgv(['rm', 'a\u202Eb']), "rm $'a\\u202eb'");
  assert.equal(quoteArgv(['echo', 'a\nb']), "echo $'a\\x0ab'");
  assert.equal(quoteArgv(['go', 'test', './...']), 'go test ./...');
  assert.equal(quoteArgv(['']), "''");
  assert.equal(visible('line1\nline2\u2066x'), 'line1\\nline2\\u2066x');
});

test('a session started without a reset reaches every replica of the state', () => {
  // The host and the webview reduce the same events; the session id must travel as one.
  const opts = [{ id: 'mode', name: 'Mode', category: 'mode', currentValue: 'plan', options: [] }];
  let s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'notice', severity: 'error', title: 'Could not start a chat' },
    { type: 'session', sessionId: undefined },
  ]);
  assert.equal(s.sessionId, undefined);
  s = reduce(s, { type: 'session', sessionId: 's2', configOptions: opts });
  assert.equal(s.sessionId, 's2');
  assert.equal(s.mode, 'plan');
  assert.equal(s.items.length, 1, 'transcript kept');
  s = reduce(s, { type: 'update', sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', messageId: 'm', content: { type: 'text', text: 'stale' } } });
  assert.equal(s.items.length, 1, "the old session's updates are ignored");
});

test('a program\'s permission lists the files agentd saves first, marking the user\'s own changes', () => {
  const saves = [{ path: '/w/a.go', userChanges: false }, { path: '/w/b.go', userChanges: true }, { path: 7 }, 'junk'];
  const s = run([
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run go test', kind: 'execute', rawInput: { command: ['go', 'test'] }, _meta: { 'agentd/saves': saves } }, options: [] } },
    { type: 'permissionAsked', requestId: 'r2', params: { toolCall: { toolCallId: 'd', title: 'Run ls', kind: 'execute' }, options: [] } },
  ]);
  assert.deepEqual((s.items[0] as any).saves, [{ path: '/w/a.go', userChanges: false }, { path: '/w/b.go', userChanges: true }]);
  assert.deepEqual((s.items[1] as any).saves, []);
  assert.equal(savesText((s.items[0] as any).saves), 'Saves first: /w/a.go, /w/b.go (with your unsaved changes)');
  assert.equal(savesText([]), '');
});

test('an MCP tool names its server in the tool row and the permission card, made visible', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'ask the tracker' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'tracker.search', kind: 'other', status: 'pending', _meta: { 'agentd/mcpServer': 'tracker' } }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed' }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'read_file', kind: 'read', status: 'pending' }),
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c3', title: 'evil.run', _meta: { 'agentd/mcpServer': 'ev\u202eil' } }, options: [{ optionId: 'allow_once', kind: 'allow_once' }] } },
  ]);
  assert.equal((s.items[1] as any).server, 'tracker', 'kept through an update that does not repeat it');
  assert.equal((s.items[2] as any).server, undefined, 'a built-in tool has no server');
  assert.equal((s.items[3] as any).server, 'ev\\u202eil', 'a bidi override in the name is shown as an escape');
});

test('Deny with feedback is offered with reject_once and carries the instruction', () => {
  assert.equal(feedbackOption([{ optionId: 'allow_once', kind: 'allow_once' }, { optionId: 'reject_once', kind: 'reject_once' }]), 'reject_once');
  assert.equal(feedbackOption([{ optionId: 'allow_once', kind: 'allow_once' }, { optionId: 'reject_always', kind: 'reject_always' }]), undefined);
  assert.deepEqual(feedbackOutcome('reject_once', '  use a map  '), { outcome: { outcome: 'selected', optionId: 'reject_once', _meta: { 'agentd/instruction': 'use a map' } } });
  assert.deepEqual(feedbackOutcome('reject_once', '   '), { outcome: { outcome: 'selected', optionId: 'reject_once' } }, 'a blank correction is a plain denial');
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { title: 'edit' }, options: [] } },
    { type: 'permissionAnswered', requestId: 'r1', answer: 'feedback', feedback: 'use a map' },
  ]);
  assert.equal((s.items[0] as any).answer, 'feedback');
  assert.equal((s.items[0] as any).feedback, 'use a map');
});

test('a turn that changed files ends with a Changes list; a turn that did not, without', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'edit two files' },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn', changes: [
      { path: '/w/a.txt', change: 'modified', added: 2, removed: 1 },
      { path: '/w/n.txt', change: 'renamed', from: '/w/o.txt', added: 0, removed: 0 },
      { change: 'modified' },
    ] },
    { type: 'promptSent', promptId: 'p2', text: 'explain' },
    { type: 'turnEnded', promptId: 'p2', stopReason: 'end_turn' },
  ]);
  assert.deepEqual(s.items.map((i) => i.kind), ['user', 'changes', 'user']);
  assert.deepEqual((s.items[1] as any).files, [
    { path: '/w/a.txt', change: 'modified', from: undefined, added: 2, removed: 1 },
    { path: '/w/n.txt', change: 'renamed', from: '/w/o.txt', added: 0, removed: 0 },
  ]);
});

test('checkpoints go on the user messages that started their turns', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'first   edit\n\n`a.txt#L1-2`' },
    { type: 'turnEnded', promptId: 'p1', stopReason: 'end_turn' },
    { type: 'promptSent', promptId: 'p2', text: 'just a question' },
    { type: 'turnEnded', promptId: 'p2', stopReason: 'end_turn' },
    { type: 'promptSent', promptId: 'p3', text: 'a very long prompt that the daemon clips' },
    { type: 'turnEnded', promptId: 'p3', stopReason: 'end_turn' },
    { type: 'checkpoints', checkpoints: [
      { checkpointId: 'cp3', prompt: 'a very long prompt…', files: [] },
      { checkpointId: 'cp1', prompt: 'first edit', files: [{ path: '/w/a.txt', change: 'modified' }] },
      { bogus: true },
    ] },
  ]);
  assert.deepEqual(s.items.map((i) => (i as any).checkpointId), ['cp1', undefined, 'cp3']);
  assert.equal(s.checkpoints.length, 2);
  // A conversation restore drops checkpoints: the markers go with them.
  const t = reduce(s, { type: 'checkpoints', checkpoints: [{ checkpointId: 'cp1', prompt: 'first edit', files: [] }] });
  assert.deepEqual(t.items.map((i) => (i as any).checkpointId), ['cp1', undefined, undefined]);

  // A conversation restore of cp1 drops its prompt and everything after it.
  const u = reduce(t, { type: 'dropTurn', checkpointId: 'cp1' });
  assert.equal(u.items.length, 0);
  // ...and gives its prompt back, to edit and send again (issue 33 item 8).
  assert.equal(u.restored, 'first   edit\n\n`a.txt#L1-2`');
  assert.equal(reduce(run([{ type: 'reset', sessionId: 's1' }, { type: 'promptSent', promptId: 'p', text: 'x' }]), { type: 'dropTurn', checkpointId: 'nope' }).items.length, 1, 'an unknown checkpoint drops nothing');
});

test('the / completion lists the commands that start with what is typed', () => {
  const cmds = [{ name: 'compact', description: 'Summarise' }, { name: 'undo' }, { name: 'init' }, { name: 'tracker.triage' }];
  assert.deepEqual(slashMatches(cmds, '/').map((c) => c.name), ['compact', 'undo', 'init', 'tracker.triage']);
  assert.deepEqual(slashMatches(cmds, '/u').map((c) => c.name), ['undo']);
  assert.deepEqual(slashMatches(cmds, '/IN').map((c) => c.name), ['init']);
  assert.deepEqual(slashMatches(cmds, '/undo now'), [], 'not once arguments are typed');
  assert.deepEqual(slashMatches(cmds, 'say /u'), [], 'only at the start');
  assert.deepEqual(slashMatches(cmds, '/x'), []);
});

test('the review compares each changed file with its text before the turn, from the first completed diff', () => {
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p0', text: 'earlier' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c0', title: 'edit', status: 'completed', content: [{ type: 'diff', path: '/w/a.txt', oldText: 'ancient', newText: 'old' }] }),
    { type: 'turnEnded', promptId: 'p0', stopReason: 'end_turn' },
    { type: 'promptSent', promptId: 'p1', text: 'edit' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'edit', status: 'completed', content: [{ type: 'diff', path: 'a.txt', oldText: 'old', newText: 'mid' }] }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c2', title: 'edit', status: 'failed', content: [{ type: 'diff', path: '/w/b.txt', oldText: 'denied', newText: 'x' }] }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c3', title: 'edit', status: 'completed', content: [{ type: 'diff', path: '/w/a.txt', oldText: 'mid', newText: 'new' }] }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c4', title: 'create', status: 'completed', content: [{ type: 'diff', path: '/w/n.txt', oldText: null, newText: 'hi' }] }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'c5', title: 'delete', status: 'completed', content: [{ type: 'diff', path: '/w/d.txt', oldText: 'gone', newText: '' }] }),
  ]);
  const abs = (p: string) => (p.startsWith('/') ? p : `/w/${p}`);
  const changes = [
    { path: '/w/a.txt', change: 'modified', added: 1, removed: 1 }, { path: '/w/b.txt', change: 'modified', added: 1, removed: 1 },
    { path: '/w/n.txt', change: 'created', added: 1, removed: 0 }, { path: '/w/d.txt', change: 'deleted', added: 0, removed: 1 },
  ];
  assert.deepEqual(turnBaselines(s.items, 'p1', changes, abs), [
    { path: '/w/a.txt', baseline: 'old', created: false },
    { path: '/w/n.txt', baseline: '', created: true },
  ]);
  assert.deepEqual(turnBaselines(s.items, 'gone', changes, abs), [], 'a turn no longer in the chat has nothing to review');
});

// Issue 26 items 3 and 9: what a program or an MCP server gets besides its argv is on the card.
test('a run_program card carries its env (every name, hiding characters escaped, secrets masked) and a bounded stdin preview with its size', () => {
  const stdin = Array.from({ length: 40 }, (_, i) => `print(${i})`).join('\n') + '\n';
  const s = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run python3 -', kind: 'execute', rawInput: {
      command: ['python3', '-'], cwd: '/w',
      env: { GIT_CONFIG_COUNT: '1', LD_PRELOAD: '/tmp/evil.so', 'NODE_OPTIONS': '--require ./x\u202e.js', GITHUB_TOKEN: 'ghp_secretvalue123' },
      stdin,
    } }, options: [] } },
  ]);
  const it: any = s.items.find((i) => i.kind === 'permission');
  assert.equal(it.command, 'python3 -');
  assert.deepEqual(it.env.map((e: any) => e.name), ['GIT_CONFIG_COUNT', 'LD_PRELOAD', 'NODE_OPTIONS', 'GITHUB_TOKEN']);
  assert.equal(it.env[1].value, '/tmp/evil.so');
  assert.equal(it.env[2].value, '--require ./x\\u202e.js');
  assert.ok(!JSON.stringify(it).includes('ghp_secretvalue123'), 'a secret-looking value is not shown');
  assert.match(it.env[3].value, /hidden, 18 characters/);
  assert.equal(it.stdin.bytes, Buffer.byteLength(stdin));
  assert.equal(it.stdin.lines, 40);
  assert.ok(it.stdin.truncated);
  assert.ok(it.stdin.preview.split('\n').length <= 8, it.stdin.preview);
  assert.ok(it.stdin.preview.startsWith('print(0)\nprint(1)'));
  const line = extrasText(it);
  assert.match(line, /LD_PRELOAD=\/tmp\/evil\.so/);
  assert.match(line, /stdin/);
});

test('a stdin with hiding characters or one huge line is previewed visibly and bounded', () => {
  const it: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run sh', kind: 'execute', rawInput: {
      command: ['sh'], stdin: 'echo ok\u001b[2K\rrm -rf ~ ' + 'x'.repeat(100000),
    } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.ok(!/[\u001b\r]/.test(it.stdin.preview), it.stdin.preview.slice(0, 40));
  assert.match(it.stdin.preview, /\\x1b\[2K\\x0drm -rf/);
  assert.ok(it.stdin.preview.length < 1000);
  assert.equal(it.stdin.bytes, 100000 + 'echo ok\u001b[2K\rrm -rf ~ '.length);
  assert.ok(it.stdin.truncated);
});

test('an empty env and no stdin add nothing to the card', () => {
  const it: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run ls', kind: 'execute', rawInput: { command: ['ls'], env: {} } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.equal(it.env, undefined);
  assert.equal(it.stdin, undefined);
  assert.equal(extrasText(it), '');
  // An empty stdin is still said: the grant covers that exact input.
  const it2: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run cat', kind: 'execute', rawInput: { command: ['cat'], stdin: '' } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.deepEqual(it2.stdin, { preview: '', bytes: 0, lines: 0, truncated: false });
});

test('a Start MCP server card shows its env (ACP list or object), its URL and headers, credentials masked', () => {
  const it: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'mcp_start_0', title: 'Start MCP server tracker', kind: 'execute', rawInput: {
      command: ['node', 'server.js'], env: [{ name: 'PYTHONPATH', value: './evil' }, { name: 'NODE_OPTIONS', value: '--require ./x.js' }],
    } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.deepEqual(it.env, [{ name: 'PYTHONPATH', value: './evil' }, { name: 'NODE_OPTIONS', value: '--require ./x.js' }]);
  const web: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'mcp_start_1', title: 'Start MCP server web', kind: 'execute', rawInput: {
      url: 'https://mcp.example/\u202emcp', headers: [{ name: 'Authorization', value: 'Bearer abcdefgh' }, { name: 'X-Tenant', value: 'acme' }],
    } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.equal(web.command, 'https://mcp.example/\\u202emcp');
  assert.deepEqual(web.headers.map((h: any) => h.name), ['Authorization', 'X-Tenant']);
  assert.ok(!JSON.stringify(web).includes('abcdefgh'));
  assert.equal(web.headers[1].value, 'acme');
  assert.match(extrasText(web), /X-Tenant: acme/);
});

test('a card whose request leaves env and stdin out shows those of the same call\'s tool update', () => {
  const it: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'promptSent', promptId: 'p1', text: 'go' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'call_run', title: 'Run python3 -', kind: 'execute', status: 'pending' }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'call_run', rawInput: { command: ['python3', '-'], env: { LD_PRELOAD: '/tmp/evil.so' }, stdin: 'x\n' } }),
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'call_run', title: 'Run python3 -', kind: 'execute', rawInput: { command: ['python3', '-'], cwd: '/w' } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.deepEqual(it.env, [{ name: 'LD_PRELOAD', value: '/tmp/evil.so' }]);
  assert.deepEqual(it.stdin, { preview: 'x', bytes: 2, lines: 1, truncated: false });
  // The request's own values win over the update's.
  const own: any = run([
    { type: 'reset', sessionId: 's1', configOptions: [] },
    { type: 'promptSent', promptId: 'p1', text: 'go' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'c', title: 'Run', kind: 'execute', status: 'pending', rawInput: { command: ['a'], env: { A: '1' } } }),
    { type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c', title: 'Run', kind: 'execute', rawInput: { command: ['a'], env: { A: '2' } } }, options: [] } },
  ]).items.find((i) => i.kind === 'permission');
  assert.deepEqual(own.env, [{ name: 'A', value: '2' }]);
});

test('the session cost shows to a millionth, and nothing without a price (never a made-up 0)', () => {
  let s = reduce(reduce(initialState(), { type: 'reset', sessionId: 's1' }), up({ sessionUpdate: 'usage_update', used: 1200, size: 200000 }));
  assert.equal(costText(s.usage?.cost), '', 'no cost without a price');
  s = reduce(s, up({ sessionUpdate: 'usage_update', used: 1500, size: 200000, cost: { amount: 0.000725, currency: 'USD' } }));
  assert.equal(costText(s.usage?.cost), '0.000725 USD');
  s = reduce(s, up({ sessionUpdate: 'usage_update', used: 1800, size: 200000, cost: { amount: 0.0123, currency: 'EUR' } }));
  assert.equal(costText(s.usage?.cost), '0.0123 EUR', 'the running total replaces the last');
  // A stopped stream (used 0) keeps the meter but takes a newer cost.
  s = reduce(s, up({ sessionUpdate: 'usage_update', used: 0, size: 200000, cost: { amount: 1.5, currency: 'EUR' } }));
  assert.equal(s.usage?.used, 1800);
  assert.equal(costText(s.usage?.cost), '1.5 EUR');
  assert.equal(costText({ amount: 0, currency: 'USD' }), '0 USD', 'a known zero price is a real 0');
  assert.equal(costText({ amount: 0.00000004, currency: 'USD' }), '4.0e-8 USD', 'a tiny amount is not rounded away');
  assert.equal(costText({ amount: 2, currency: 'US\u001b[2JD' }), '2 US[2JD', 'a currency cannot carry controls');
  for (const bad of [undefined, null, 'x', {}, { amount: 'x' }, { amount: NaN }, { amount: -1 }]) assert.equal(costText(bad), '', JSON.stringify(bad));
});

test("a subagent's tool calls go under its agent call, in order, before the parent's next call", () => {
  const child = { 'agentd/parentToolCallId': 'a1' };
  const s = run([
    { type: 'reset', sessionId: 's1' },
    { type: 'promptSent', promptId: 'p1', text: 'explore' },
    up({ sessionUpdate: 'tool_call', toolCallId: 'a1', title: 'Agent explore: find it', kind: 'think', status: 'pending' }),
    up({ sessionUpdate: 'tool_call', toolCallId: 'a1/c1', title: 'Search parse', kind: 'search', status: 'pending', _meta: child }),
    up({ sessionUpdate: 'tool_call', toolCallId: 't9', title: 'Read main.go', kind: 'read', status: 'pending' }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'a1/c2', title: 'Read parser.go', status: 'completed', _meta: child }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'a1', status: 'completed' }),
  ]);
  const tools = s.items.filter((i) => i.kind === 'tool') as any[];
  assert.deepEqual(tools.map((t) => `${t.id}:${t.parent ?? ''}`), ['a1:', 'a1/c1:a1', 'a1/c2:a1', 't9:']);
  assert.equal(tools[2].status, 'completed');
});
