import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChatState, Event, initialState, reduce, buttonsFor, optionForButton } from '../../src/pure/viewmodel';
import { programLine, programOf, programText, sandboxOf, sandboxText, escalationOf } from '../../src/pure/sandbox';

const run = (events: Event[], s: ChatState = initialState()) => events.reduce(reduce, s);
const up = (update: any): Event => ({ type: 'update', sessionId: 's1', update });

test('a program\'s tool line carries its sandbox and, in the background, its state to the end', () => {
  const s = run([
    up({ sessionUpdate: 'tool_call', toolCallId: 'c1', title: 'Run npm run dev', kind: 'execute', status: 'pending' }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', _meta: { 'agentd/sandbox': { applied: true, writable: ['/p', '$TMPDIR'], network: false } } }),
    up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', status: 'completed', rawOutput: { programId: 'prog_1', sandbox: { applied: true } } }),
  ]);
  const it = s.items[0] as any;
  assert.deepEqual(it.sandbox, { applied: true, network: false, writable: ['/p', '$TMPDIR'] });
  assert.deepEqual(it.program, { id: 'prog_1', state: 'running' });
  assert.equal(programText(it.program), 'prog_1 running');
  const ended = run([up({ sessionUpdate: 'tool_call_update', toolCallId: 'c1', _meta: { 'agentd/program': { programId: 'prog_1', state: 'exited', exitCode: 2 } } })], s);
  assert.equal(programText((ended.items[0] as any).program), 'prog_1 exited 2');
  // A later update without the sandbox keeps what was said.
  assert.equal((ended.items[0] as any).sandbox.applied, true);
});

test('the card says what a sandboxed program may write, and shows an escalation\'s reason made visible', () => {
  const boxed = run([{ type: 'permissionAsked', requestId: 'r1', params: { toolCall: { toolCallId: 'c1', title: 'Run make (sandboxed)', rawInput: { command: ['make'], cwd: '/p' }, _meta: { 'agentd/sandbox': { applied: true, writable: ['/p', '$TMPDIR'], network: false } } }, options: [
    { optionId: 'allow_once', kind: 'allow_once' },
    { optionId: 'allow_sandboxed_session', kind: 'allow_always', _meta: { 'agentd/scope': 'session' } },
    { optionId: 'allow_session', kind: 'allow_always', _meta: { 'agentd/scope': 'session' } },
    { optionId: 'reject_once', kind: 'reject_once' },
  ] } }]).items[0] as any;
  assert.equal(sandboxText(boxed.sandbox), 'Sandboxed: writes only /p, $TMPDIR; no network.');
  assert.equal(boxed.escalation, undefined);
  assert.deepEqual(buttonsFor(boxed.options), ['allow_once', 'allow_sandboxed', 'allow_session', 'deny']);
  // "Allow for session" stays the call's own grant, not the sandboxed one.
  assert.equal(optionForButton(boxed.options, 'allow_session'), 'allow_session');
  assert.equal(optionForButton(boxed.options, 'allow_sandboxed'), 'allow_sandboxed_session');
  const esc = run([{ type: 'permissionAsked', requestId: 'r2', params: { toolCall: { title: 'Run docker ps outside the sandbox: x', rawInput: { command: ['docker', 'ps'], sandbox: false, justification: 'needs docker.sock\u202e\nnow' }, _meta: { 'agentd/sandbox': { applied: false, writable: [], network: true } } }, options: [{ optionId: 'allow_once', kind: 'allow_once' }, { optionId: 'reject_once', kind: 'reject_once' }] } }]).items[0] as any;
  assert.equal(esc.escalation, 'needs docker.sock\\u202e\\nnow');
  assert.equal(sandboxText(esc.sandbox), 'Not sandboxed: it runs with your full rights.');
  assert.equal(escalationOf({ sandbox: false }), '(no reason given)');
  assert.equal(escalationOf({ command: ['x'] }), undefined);
  assert.equal(sandboxOf({}), undefined);
  assert.equal(programOf({ rawOutput: { output: 'x' } }), undefined);
});

test('a listed program says its state, command and sandbox on one line', () => {
  assert.equal(programLine({ programId: 'prog_2', command: ['npm', 'run', 'dev'], cwd: '/p', state: 'stopped', exitCode: -1, sandboxed: true }, 'npm run dev'), 'prog_2 stopped · npm run dev · sandboxed');
  assert.equal(programLine({ programId: 'prog_3', command: ['x'], cwd: '/p', state: 'exited', exitCode: 0, sandboxed: false }, 'x'), 'prog_3 exited 0 · x · not sandboxed');
});
