import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bundledPath, findAgentd, BinaryLookup } from '../../src/pure/binary';

function lookup(over: Partial<BinaryLookup>, files: string[]): BinaryLookup {
  return {
    configuredPath: '', extensionPath: '/ext', platform: 'linux', arch: 'x64', pathEnv: '/usr/local/bin:/usr/bin', homeDir: '/home/u',
    isExecutable: (p) => files.includes(p), ...over,
  };
}

test('the agentd.path setting wins when it exists', () => {
  const r = findAgentd(lookup({ configuredPath: '/opt/agentd' }, ['/opt/agentd', '/ext/bin/linux-x64/agentd', '/usr/bin/agentd']));
  assert.deepEqual(r, { ok: true, path: '/opt/agentd', source: 'setting' });
});

test('a configured path that does not exist is an error, not a silent fallback', () => {
  const r = findAgentd(lookup({ configuredPath: '/nope/agentd' }, ['/usr/bin/agentd']));
  assert.equal(r.ok, false);
  assert.match((r as any).message, /agentd\.path.*\/nope\/agentd/);
});

test('a leading ~ in agentd.path is the home directory', () => {
  const r = findAgentd(lookup({ configuredPath: '~/bin/agentd' }, ['/home/u/bin/agentd']));
  assert.deepEqual(r, { ok: true, path: '/home/u/bin/agentd', source: 'setting' });
});

test('the bundled binary for this platform comes before PATH', () => {
  assert.equal(bundledPath('/ext', 'linux', 'x64'), '/ext/bin/linux-x64/agentd');
  const r = findAgentd(lookup({}, ['/ext/bin/linux-x64/agentd', '/usr/bin/agentd']));
  assert.deepEqual(r, { ok: true, path: '/ext/bin/linux-x64/agentd', source: 'bundled' });
});

test('a binary for another platform is not used', () => {
  const r = findAgentd(lookup({ arch: 'arm64' }, ['/ext/bin/linux-x64/agentd', '/usr/bin/agentd']));
  assert.deepEqual(r, { ok: true, path: '/usr/bin/agentd', source: 'path' });
});

test('PATH is searched in order', () => {
  const r = findAgentd(lookup({}, ['/usr/local/bin/agentd', '/usr/bin/agentd']));
  assert.deepEqual(r, { ok: true, path: '/usr/local/bin/agentd', source: 'path' });
});

test('nothing found gives one message that says what to do', () => {
  const r = findAgentd(lookup({}, []));
  assert.equal(r.ok, false);
  assert.match((r as any).message, /not found/);
  assert.match((r as any).message, /agentd\.path/);
  assert.match((r as any).message, /go install/);
});
