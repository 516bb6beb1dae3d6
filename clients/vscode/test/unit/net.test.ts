import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isLoopbackOrPrivateHost, needsNoKey } from '../../src/pure/net';

test('loopback and private hosts need no key', () => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', '10.0.0.5', '172.16.0.1',
    '172.31.255.255', '192.168.1.20', '169.254.1.1', 'fd12:3456::1', 'fe80::1', '::ffff:192.168.0.1', 'localhost', 'LocalHost']) {
    assert.equal(isLoopbackOrPrivateHost(h), true, h);
  }
});

test('public hosts and look-alikes need a key', () => {
  for (const h of ['api.openai.com', '8.8.8.8', '172.15.0.1', '172.32.0.1', '192.169.0.1', '11.0.0.1', 'localhost.evil.com', 'api.localhost', 'box.internal',
    '127.0.0.1.nip.io', '2001:db8::1', '256.1.1.1']) {
    assert.equal(isLoopbackOrPrivateHost(h), false, h);
  }
});

test('needsNoKey reads the URL host', () => {
  assert.equal(needsNoKey('http://127.0.0.1:11434/v1'), true);
  assert.equal(needsNoKey('http://192.168.0.7:1234/v1'), true);
  assert.equal(needsNoKey('http://[::1]:8080/v1'), true);
  assert.equal(needsNoKey('https://openrouter.ai/api/v1'), false);
  assert.equal(needsNoKey('not a url'), false);
});
