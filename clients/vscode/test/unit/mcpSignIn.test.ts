import { test } from 'node:test';
import assert from 'node:assert/strict';
import { browserMayBeElsewhere, isWebURL, loopbackOrigin, pageBehindProxy, pastedAddressProblem, signInServer } from '../../src/pure/mcpSignIn';

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

test('a loopback page has an origin the host may proxy; any other none', () => {
  assert.equal(loopbackOrigin('http://127.0.0.1:4000/authorize?x=1'), 'http://127.0.0.1:4000/');
  assert.equal(loopbackOrigin('HTTP://LocalHost:80?x'), 'http://localhost:80/');
  assert.equal(loopbackOrigin('http://0.0.0.0:9'), 'http://0.0.0.0:9/');
  for (const u of ['https://as.example/authorize', 'http://127.0.0.1/authorize', 'http://127.0.0.1.evil.example:4000/x',
    'http://localhost:4000@evil.example/x', 'http://[::1]:4000/x', 'file://127.0.0.1:4000/x', 'javascript://127.0.0.1:4000/%0aalert(1)']) {
    assert.equal(loopbackOrigin(u), undefined, u);
  }
});

test('a page behind the host\'s proxy keeps its path and query', () => {
  const page = 'http://127.0.0.1:4000/authorize?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Foauth%2Fcallback&state=a%2Bb#f';
  const origin = 'http://127.0.0.1:4000/';
  // code-server: the proxy drops everything after the port.
  assert.equal(pageBehindProxy(page, origin, 'http://127.0.0.1:18080/proxy/4000/'),
    'http://127.0.0.1:18080/proxy/4000/authorize?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Foauth%2Fcallback&state=a%2Bb#f');
  assert.equal(pageBehindProxy(page, origin, 'https://4000.code.example/'), 'https://4000.code.example/authorize?response_type=code&redirect_uri=http%3A%2F%2F127.0.0.1%3A5000%2Foauth%2Fcallback&state=a%2Bb#f');
  assert.equal(pageBehindProxy('http://127.0.0.1:4000?x=1', origin, 'http://h/proxy/4000'), 'http://h/proxy/4000/?x=1');
  // A local window, or a port forward the host makes itself when it opens the page: as it is.
  assert.equal(pageBehindProxy(page, origin, origin), page);
  // Never a made-up scheme, never a page of another origin.
  assert.equal(pageBehindProxy(page, origin, 'javascript:alert(1)//'), page);
  assert.equal(pageBehindProxy('http://127.0.0.1:40001/x', origin, 'http://h/proxy/4000/'), 'http://127.0.0.1:40001/x');
});

test('a pasted address must look like a sign-in answer', () => {
  assert.equal(pastedAddressProblem(' http://127.0.0.1:5000/oauth/callback?code=c&state=s&iss=x \n'), undefined);
  assert.equal(pastedAddressProblem('http://127.0.0.1:5000/oauth/callback?error=access_denied&state=s'), undefined);
  for (const t of ['', '   ', 'code=c&state=s', 'javascript:alert(1)?code=c&state=s', 'file:///x?code=c&state=s',
    'http://127.0.0.1:5000/oauth/callback', 'http://127.0.0.1:5000/oauth/callback?code=c', 'http://127.0.0.1:5000/oauth/callback?state=s']) {
    assert.ok(pastedAddressProblem(t), JSON.stringify(t));
  }
});

test('the browser may be elsewhere in a remote or browser-served window only', () => {
  assert.equal(browserMayBeElsewhere(undefined, false), false);
  assert.equal(browserMayBeElsewhere('ssh-remote', false), true);
  assert.equal(browserMayBeElsewhere(undefined, true), true);
});
