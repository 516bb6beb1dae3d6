import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestError, turnError } from '../../src/pure/errors';

test('a provider error is a sentence, with its raw text as detail', () => {
  const e = turnError({ kind: 'auth', message: 'openai: 401 {"error":{"message":"Incorrect API key"}}' })!;
  assert.match(e.title, /refused the API key/);
  assert.equal(e.detail, 'openai: 401 {"error":{"message":"Incorrect API key"}}');
  assert.match(turnError({ kind: 'rate_limit', retryAfterMs: 7200 })!.title, /in 8 s/);
  assert.equal(turnError({ kind: 'weird', message: 'x' })!.title, 'The model request failed.');
  assert.equal(turnError(undefined), undefined);
});

test('the language client wrapping never reaches the headline', () => {
  const e = requestError({ code: -32603, message: 'Request agent/session/prompt failed with message: session: boom' }, 'send the prompt');
  assert.equal(e.title, 'Could not send the prompt.');
  assert.equal(e.detail, 'session: boom');
  assert.doesNotMatch(e.title, /agent\/session|Request/);
});

test('known failures get their own sentence', () => {
  assert.match(requestError({ code: -32002, message: 'unknown session x' }, 'load the chat').title, /no longer has it\. The chat goes on in a new session/);
  assert.match(requestError({ code: -32002, message: 'unknown session x' }, 'delete the chat').title, /no longer has this chat\. Start a new chat/);
  assert.match(requestError(new Error('Pending response rejected since connection got disposed'), 'send the prompt').title, /agentd is not running/);
  assert.equal(requestError({ code: -32800, message: 'cancelled' }, 'load the chat').title, 'Cancelled.');
});
