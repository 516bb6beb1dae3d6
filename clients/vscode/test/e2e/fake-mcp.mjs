// A minimal MCP server over stdio (newline-delimited JSON-RPC) for the e2e tests: `lookup`, that
// answers with a fixed text; `ask`, that asks the user a form question (elicitation/create, its
// message and a field's title carrying escape sequences) and answers with what came back; and one
// resource, `tracker://issues/42`. agentd starts it from the user settings' mcpServers.
import readline from 'node:readline';

const asked = new Map(); // our elicitation/create id → the tools/call id it answers
const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', ...m }) + '\n');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // notifications
  if (m.method === undefined) { // the answer to our question: the pending call's result
    const call = asked.get(m.id);
    asked.delete(m.id);
    if (call !== undefined) send({ id: call, result: { content: [{ type: 'text', text: `answer: ${m.result?.action ?? 'error'} ${JSON.stringify(m.result?.content ?? null)}` }] } });
    return;
  }
  switch (m.method) {
    case 'initialize':
      send({ id: m.id, result: { protocolVersion: m.params?.protocolVersion ?? '2025-06-18', capabilities: { tools: {}, resources: {} }, serverInfo: { name: 'tracker', version: '1' } } });
      return;
    case 'tools/list':
      send({ id: m.id, result: { tools: [
        { name: 'lookup', description: 'Look an issue up in the tracker', inputSchema: { type: 'object', properties: { id: { type: 'string' } } } },
        { name: 'ask', description: 'Ask the user where to deploy', inputSchema: { type: 'object' } },
      ] } });
      return;
    case 'tools/call':
      if (m.params?.name === 'ask') {
        const id = `ask-${m.id}`;
        asked.set(id, m.id);
        send({ id, method: 'elicitation/create', params: { mode: 'form', message: 'Deploy where?\x1b[2J', requestedSchema: { type: 'object',
          properties: { env: { type: 'string', title: 'Environment\x1b[31m', enum: ['dev', 'prod'] }, note: { type: 'string', title: 'Note' } }, required: ['env', 'note'] } } });
        return;
      }
      send({ id: m.id, result: { content: [{ type: 'text', text: `issue ${m.params?.arguments?.id ?? '?'}: the login button is broken` }] } });
      return;
    case 'resources/list':
      // A title a webview must show as text, not run.
      send({ id: m.id, result: { resources: [{ uri: 'tracker://issues/42', name: 'issue-42', title: '<img src=x onerror="document.body.dataset.pwned=1">Issue 42', mimeType: 'text/plain' }] } });
      return;
    case 'resources/read':
      send({ id: m.id, result: { contents: [{ uri: m.params?.uri, mimeType: 'text/plain', text: m.params?.uri === 'tracker://issues/42' ? 'issue 42 resource: the signup form times out' : 'no such issue' }] } });
      return;
    case 'ping':
      send({ id: m.id, result: {} });
      return;
    default:
      send({ id: m.id, error: { code: -32601, message: `no method ${m.method}` } });
  }
});
