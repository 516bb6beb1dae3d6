import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mcpContextValue, mcpNodes } from '../../src/pure/mcplist';

test('the MCP view lists each server with its state and why it is down, its tools and resources', () => {
  const nodes = mcpNodes([
    { name: 'docs', type: 'http', target: 'https://d.example/mcp', state: 'ready', tools: [{ name: 'lookup', description: 'Looks\nup', offered: true }, { name: 'rare', offered: false }], resources: [{ uri: 'doc://intro' }] },
    { name: 'gone\u001b[31m', type: 'stdio', target: 'gone-server', state: 'failed', error: 'its command was not found', tools: [] },
  ]);
  assert.equal(nodes.length, 2);
  assert.equal(nodes[0].label, 'docs');
  assert.equal(nodes[0].description, 'ready');
  assert.equal(nodes[0].icon, 'pass');
  assert.deepEqual(nodes[0].children.map((c) => [c.label, c.description, c.tool]), [['lookup', 'offered', 'lookup'], ['rare', 'not offered', 'rare'], ['1 resources', 'mention one as @docs:URI', undefined]]);
  assert.ok(!nodes[0].children[0].tooltip!.includes('\n'));
  assert.equal(nodes[1].description, 'failed: its command was not found');
  assert.ok(!nodes[1].label.includes('\u001b'), 'an escape does not reach the label');
  assert.equal(nodes[1].server, 'gone\u001b[31m', 'the node keeps the server it is about, for actions on it');
  assert.equal(mcpNodes([]).length, 1);
  assert.equal(mcpNodes([])[0].server, '');
});

test('a server that signs in offers Sign in or Sign out on its node, nothing else does', () => {
  const nodes = mcpNodes([
    { name: 'docs', state: 'failed', error: 'it needs you to sign in', auth: 'needed', tools: [] },
    { name: 'wiki', state: 'ready', auth: 'signedIn', tools: [{ name: 'find', offered: true }], resources: [{ uri: 'w://a' }] },
    { name: 'local', state: 'ready', tools: [] },
    { name: 'odd', state: 'ready', auth: 'sure\u001b', tools: [] },
  ]);
  assert.deepEqual(nodes.map(mcpContextValue), ['agentd.mcpServer.needed', 'agentd.mcpServer.signedIn', 'agentd.mcpServer', 'agentd.mcpServer']);
  assert.equal(nodes[0].icon, 'account');
  assert.equal(nodes[1].description, 'ready, signed in');
  assert.deepEqual(nodes[1].children.map(mcpContextValue), ['agentd.mcpTool', 'agentd.mcpServer'], 'a tool or the resources node is no server to sign out of');
  assert.equal(mcpContextValue(mcpNodes([])[0]), undefined);
});
