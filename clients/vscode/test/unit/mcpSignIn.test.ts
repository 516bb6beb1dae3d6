import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isWebURL, signInServer } from '../../src/pure/mcpSignIn';

test('a sign-in notice names its server', () => {
  assert.equal(signInServer({ sessionId: 's1', update: { sessionUpdate: 'notice', title: 'x', _meta: { 'agentd/mcpSignIn': { server: 'docs' } } } }), 'docs');
});

test('anything else names none', () => {
  for (const p of [
    undefined,
    { sessionId: 's1', update: { sessionUpdate: 'notice', title: 'MCP server docs is not available' } },
    { sessionId: 's1', update: { sessionUpdate: 'agent_message_chunk', _meta: { 'agentd/mcpSignIn': { server: 'docs' } } } },
    { sessionId: 's1', update: { sessionUpdate: 'notice', _meta: { 'agentd/mcpSignIn': { server: '' } } } },
    { sessionId: 's1', update: { sessionUpdate: 'notice', _meta: { 'agentd/mcpSignIn': { server: 42 } } } },
    { sessionId: 's1', update: { sessionUpdate: 'notice', _meta: { 'agentd/mcpSignIn': 'docs' } } },
    { sessionId: 's1', update: { sessionUpdate: 'notice', _meta: null } },
    { update: { sessionUpdate: 'notice', _meta: { 'agentd/mcpSignIn': { server: 'docs' } } } },
  ]) assert.equal(signInServer(p as any), undefined, JSON.stringify(p));
});

test('only web pages are sign-in pages', () => {
  assert.equal(isWebURL('https://as.example/authorize?x=1'), true);
  assert.equal(isWebURL('http://127.0.0.1:4000/authorize'), true);
  for (const u of ['file:///etc/passwd', 'javascript:alert(1)', 'vscode://agentd/x', 'https:///nohost', '']) assert.equal(isWebURL(u), false, u);
});
