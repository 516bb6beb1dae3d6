import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  didChangeConfigurationParams, effectiveSettings, initializationOptions, PRESETS, originOf, originOfSecretKey, legacyKeyMigrations, legacyUnusedKeys, secretStorageKey, stripSecrets, userMode, userValue, USER_ONLY_SETTINGS, withProvider,
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
  assert.equal(o.agent.clientCapabilities.editorState, true, 'agentd asks agent/x/editor_state only of clients that declare it');
  assert.equal(o.agent.clientCapabilities.notices, true, 'a client that does not declare it gets every notice as window/showMessage too');
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

test('a key is stored and served by origin, written as agentd writes it', () => {
  assert.equal(originOf('https://api.openai.com/v1'), 'https://api.openai.com');
  assert.equal(originOf('HTTPS://API.OpenAI.com:443/v1/'), 'https://api.openai.com');
  assert.equal(originOf('http://127.0.0.1:18181/v1'), 'http://127.0.0.1:18181');
  assert.equal(originOf('http://[::1]:80/x'), 'http://[::1]');
  assert.equal(originOf('ftp://x'), undefined);
  assert.equal(originOf('not a url'), undefined);
  assert.equal(secretStorageKey('https://openrouter.ai'), 'agentd.apiKey.https://openrouter.ai');
  assert.equal(originOfSecretKey('agentd.apiKey.https://openrouter.ai'), 'https://openrouter.ai');
  assert.equal(originOfSecretKey('agentd.apiKey.http://127.0.0.1:18181'), 'http://127.0.0.1:18181');
});

test('only an origin key is served: provider ids, URLs and look-alikes get nothing', () => {
  // The old provider-id keys followed whatever baseUrl the provider had later.
  for (const k of ['agentd.apiKey.openai', 'agentd.apiKey.openai.proxy', 'openai', 'OPENAI_API_KEY',
    'providers/openai/apiKey', 'agentd.apiKey.https://api.openai.com/v1', 'agentd.apiKey.https://API.openai.com',
    'agentd.apiKey.https://api.openai.com:443', 'agentd.apiKey.https://user@api.openai.com', 'agentd.apiKey.', 'agentd.apiKey.https://openrouter.ai/']) {
    assert.equal(originOfSecretKey(k), undefined, k);
  }
});

test('old provider-id keys move only where the server was fixed', () => {
  const m = legacyKeyMigrations();
  assert.deepEqual(m.find((x) => x.from === 'agentd.apiKey.openai')?.to, 'agentd.apiKey.https://api.openai.com');
  assert.deepEqual(m.find((x) => x.from === 'agentd.apiKey.openrouter')?.to, 'agentd.apiKey.https://openrouter.ai');
  // A local preset's key was typed for a URL the user chose then: never moved, never served.
  assert.equal(m.some((x) => x.from === 'agentd.apiKey.ollama'), false);
  assert.ok(legacyUnusedKeys().includes('agentd.apiKey.ollama'));
});

// Issue 26 item 5: a repository's .vscode/settings.json must not loosen agentd.
test('userValue takes the user\'s value or the default, never a workspace or folder one', () => {
  assert.equal(userValue({ defaultValue: '', globalValue: '/usr/bin/agentd', workspaceValue: '/repo/evil', workspaceFolderValue: '/repo/evil2' }), '/usr/bin/agentd');
  assert.equal(userValue({ defaultValue: '', workspaceValue: '/repo/evil', workspaceFolderValue: '/repo/evil2' }), '');
  assert.deepEqual(userValue<any>({ defaultValue: {}, workspaceValue: { provider: 'evil', providers: { evil: { baseUrl: 'https://evil.example', apiKeyEnv: 'ANTHROPIC_API_KEY' } } } }), {});
  assert.equal(userValue(undefined), undefined);
});

test('userMode is the mode the user set, never the workspace\'s auto', () => {
  assert.equal(userMode({ defaultValue: 'ask', workspaceValue: 'auto', workspaceFolderValue: 'auto' }), undefined);
  assert.equal(userMode({ defaultValue: 'ask', globalValue: 'plan', workspaceValue: 'auto' }), 'plan');
  // What agentd then gets: the workspace's auto (in the setting or inside agentd.settings) never arrives.
  const ws = { defaultValue: {}, workspaceValue: { mode: 'auto' } };
  assert.equal(effectiveSettings(userValue<any>(ws), userMode({ defaultValue: 'ask', workspaceValue: 'auto' })).settings.mode, 'ask');
});

test('package.json gives every user-only setting application scope and restricts it in untrusted workspaces', () => {
  const pkg = JSON.parse(fs.readFileSync(path.resolve(__dirname, '..', '..', '..', 'package.json'), 'utf8'));
  const props = pkg.contributes.configuration.properties;
  const untrusted = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(untrusted?.supported, 'limited');
  for (const k of USER_ONLY_SETTINGS) {
    const key = `agentd.${k}`;
    assert.ok(props[key], `${key} is declared`);
    assert.ok(['application', 'machine'].includes(props[key].scope), `${key} has scope ${props[key].scope}`);
    assert.ok(untrusted.restrictedConfigurations.includes(key), `${key} is a restricted configuration`);
  }
  // Every other setting of the extension is one that cannot loosen anything (reviewed here when one is added).
  const others = Object.keys(props).filter((k) => !USER_ONLY_SETTINGS.map((s) => `agentd.${s}`).includes(k));
  // inlineSuggestions.enabled only hides ghost text; where the text goes is agentd's user-only
  // `completion` setting. It is application-scoped anyway: the toggle writes the user's settings.
  assert.deepEqual(others, ['agentd.inlineSuggestions.enabled', 'agentd.trace.server']);
  assert.equal(props['agentd.inlineSuggestions.enabled'].scope, 'application');
});
