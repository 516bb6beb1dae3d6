import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReadyGate, Cancellation } from '../../src/pure/ready';
import { requestError } from '../../src/pure/errors';

/** A settled-or-not probe: resolves to 'pending' unless the promise settled before a macrotask. */
async function outcome(p: Promise<void>): Promise<string> {
  const r = p.then(() => 'resolved', (e: Error) => `rejected: ${e.message}`);
  return Promise.race([r, new Promise<string>((res) => setImmediate(() => res('pending')))]);
}

function token(): Cancellation & { cancel(): void; listeners: number } {
  let fns: Array<() => void> = [];
  const t = {
    isCancellationRequested: false,
    get listeners() { return fns.length; },
    onCancellationRequested(fn: () => void) { fns.push(fn); return { dispose: () => { fns = fns.filter((f) => f !== fn); } }; },
    cancel() { t.isCancellationRequested = true; for (const f of [...fns]) f(); },
  };
  return t;
}

test('a request made while agentd starts waits until it is ready', async () => {
  const g = new ReadyGate();
  const a = g.wait();
  const b = g.wait();
  assert.equal(await outcome(a), 'pending');
  assert.equal(g.waiting, 2);
  g.set('starting', 'agentd exited unexpectedly; restarting (1/3).');
  assert.equal(await outcome(b), 'pending');
  g.set('ready');
  assert.equal(await outcome(a), 'resolved');
  assert.equal(await outcome(b), 'resolved');
  assert.equal(g.waiting, 0);
  assert.equal(await outcome(g.wait()), 'resolved');
});

test('waiting requests fail with the reason when agentd cannot start', async () => {
  const g = new ReadyGate();
  const a = g.wait();
  g.set('error', 'agentd could not be started: spawn ENOENT');
  assert.equal(await outcome(a), 'rejected: agentd could not be started: spawn ENOENT');
  // Later requests fail at once, as before there was a gate.
  assert.equal(await outcome(g.wait()), 'rejected: agentd could not be started: spawn ENOENT');
  g.set('stopped');
  assert.equal(await outcome(g.wait()), 'rejected: agentd is not running.');
  // A restart opens the gate again.
  g.set('starting');
  const b = g.wait();
  assert.equal(await outcome(b), 'pending');
  g.set('stopped', 'agentd stopped 4 times in a few minutes and will not be restarted.');
  assert.equal(await outcome(b), 'rejected: agentd stopped 4 times in a few minutes and will not be restarted.');
});

test('a cancelled wait rejects as a cancelled request and leaves the others waiting', async () => {
  const g = new ReadyGate();
  const t = token();
  const a = g.wait(t);
  const b = g.wait();
  t.cancel();
  const e = await a.then(() => undefined, (x) => x);
  assert.equal(requestError(e, 'send the prompt').title, 'Cancelled.');
  assert.equal(g.waiting, 1);
  g.set('ready');
  assert.equal(await outcome(b), 'resolved');
  // Settled waits stop listening to their token.
  const t2 = token();
  const c = g.wait(t2);
  assert.equal(await outcome(c), 'resolved');
  g.set('starting');
  const d = g.wait(t2);
  assert.equal(t2.listeners, 1);
  g.set('ready');
  await d;
  assert.equal(t2.listeners, 0);
  // An already cancelled token does not wait at all.
  g.set('starting');
  assert.equal(await outcome(g.wait(t)), 'rejected: cancelled while waiting for agentd to start');
  assert.equal(g.waiting, 0);
});
