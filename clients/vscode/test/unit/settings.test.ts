import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  didChangeConfigurationParams, effectiveSettings, initializationOptions, PRESETS, secretCandidates, stripSecrets, withProvider,
} from '../../src/pure/settings';

test('agentd.settings pass through with the mode defaulting to ask', () => {
  const raw = { provider: 'fake', providers: { fake: { apiType: 'openai', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' } }, maxTokens: 100 };
  const { settings, removed } = effectiveSettings(raw, undefined);
  assert.deepEqual(settings, { ...raw, mode: 'ask' });
  assert.deepEqual(removed, []);
});

test('an explicit agentd.mode overrides the mode inside agentd.settings', () => {
  assert.equal(effectiveSettings({ mode: 'plan' }, 'auto').settings.mode, 'auto');
  assert.equal(effectiveSettings({ mode: 'plan' }, undefined).settings.mode, 'plan');
  assert.equal(effectiveSettings({ mode: 'bogus' }, undefined).settings.mode, 'ask');
  assert.equal(effectiveSettings({}, 'nonsense').settings.mode, 'ask');
});

test('non-object settings become empty', () => {
  assert.deepEqual(effectiveSettings('x', undefined).settings, { mode: 'ask' });
  assert.deepEqual(effectiveSettings([1], undefined).settings, { mode: 'ask' });
  assert.deepEqual(effectiveSettings(null, undefined).settings, { mode: 'ask' });
});

test('secret-looking fields are stripped and reported', () => {
  const raw = { providers: { openai: { apiType: 'openai', apiKey: 'sk-123', headers: { Authorization: 'Bearer x', 'X-Title': 'me' } } } };
  const { value, removed } = stripSecrets(raw);
  assert.deepEqual(value, { providers: { openai: { apiType: 'openai', headers: { 'X-Title': 'me' } } } });
  assert.deepEqual(removed.sort(), ['providers.openai.apiKey', 'providers.openai.headers.Authorization']);
  // apiKeyEnv names a variable, not a secret: kept.
  assert.deepEqual(stripSecrets({ apiKeyEnv: 'MY_KEY' }).removed, []);
  assert.equal(JSON.stringify(effectiveSettings(raw, undefined).settings).includes('sk-123'), false);
});

test('initializationOptions carry the protocol version, capabilities and settings', () => {
  const o = initializationOptions({ mode: 'ask' }, { name: 'agentd-vscode', version: '1' });
  assert.equal(o.agent.protocolVersion, 1);
  assert.deepEqual(o.agent.settings, { mode: 'ask' });
  assert.equal(o.agent.clientCapabilities.fs.readTextFile, true);
  assert.equal(o.agent.clientCapabilities.permissions.ui, true);
  assert.equal(o.agent.clientCapabilities.secrets, true);
  assert.deepEqual(didChangeConfigurationParams({ mode: 'plan' }), { settings: { agent: { mode: 'plan' } } });
});

test('withProvider makes the provider the default and keeps other settings', () => {
  const s = withProvider({ maxTokens: 5, providers: { other: { apiType: 'gemini' }, ollama: { apiType: 'openai', extra: 1, model: 'old' } } },
    'ollama', { apiType: 'openai', baseUrl: 'http://localhost:11434/v1', model: 'qwen' });
  assert.deepEqual(s, {
    maxTokens: 5, provider: 'ollama',
    providers: { other: { apiType: 'gemini' }, ollama: { apiType: 'openai', extra: 1, baseUrl: 'http://localhost:11434/v1', model: 'qwen' } },
  });
  assert.equal((withProvider(undefined, 'x', { apiType: 'openai', baseUrl: 'u' }).providers as any).x.model, undefined);
});

test('presets cover the documented providers', () => {
  assert.deepEqual(PRESETS.map((p) => p.label), ['Anthropic', 'OpenAI', 'Gemini', 'Ollama', 'LM Studio', 'llama-server (llama.cpp)', 'OpenRouter']);
});

test('secret keys map to provider ids', () => {
  assert.equal(secretCandidates('openai')[0], 'openai');
  assert.equal(secretCandidates('providers/openrouter/apiKey')[0], 'openrouter');
  assert.equal(secretCandidates('apiKey:gemini')[0], 'gemini');
  assert.equal(secretCandidates('agentd.apiKey.lmstudio')[0], 'lmstudio');
  assert.ok(secretCandidates('ANTHROPIC_API_KEY').includes('anthropic'));
});

test("a provider's key is never served for another provider whose id contains its name", () => {
  // agentd asks agentd.apiKey.<providerId>; "openai.proxy" (another origin) must not get the key
  // stored for "openai".
  assert.deepEqual(secretCandidates('agentd.apiKey.openai.proxy'), ['openai.proxy']);
  assert.deepEqual(secretCandidates('agentd.apiKey.work:openai'), ['work:openai']);
  assert.deepEqual(secretCandidates('providers/openai/proxy/apiKey'), []);
});
