// Mapping VS Code settings to what agentd receives: `agentd.settings` (same keys as agentd's
// config file) plus `agentd.mode`, with anything that looks like a secret removed, since API
// keys belong in SecretStorage, never in settings.json.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Settings = { [k: string]: Json };

export const MODES = ['ask', 'auto', 'plan'] as const;
export type Mode = (typeof MODES)[number];

const SECRET_KEY = /^(api[-_]?key|apikey|key|token|secret|password|authorization)$/i;

/** Returns a deep copy without secret-looking fields, and the dotted paths it removed. */
export function stripSecrets(value: Json, at = ''): { value: Json; removed: string[] } {
  const removed: string[] = [];
  const walk = (v: Json, p: string): Json => {
    if (Array.isArray(v)) return v.map((x, i) => walk(x, `${p}[${i}]`));
    if (v && typeof v === 'object') {
      const out: { [k: string]: Json } = {};
      for (const [k, x] of Object.entries(v)) {
        const kp = p ? `${p}.${k}` : k;
        // `headers` may carry Authorization; `env` of MCP servers is the user's own business.
        if (SECRET_KEY.test(k) && typeof x === 'string' && x !== '') { removed.push(kp); continue; }
        if (k.toLowerCase() === 'headers' && x && typeof x === 'object' && !Array.isArray(x)) {
          const h: { [k: string]: Json } = {};
          for (const [hk, hv] of Object.entries(x)) {
            if (/^(authorization|x-api-key|api-key|x-goog-api-key)$/i.test(hk)) removed.push(`${kp}.${hk}`);
            else h[hk] = hv;
          }
          out[k] = h;
          continue;
        }
        out[k] = walk(x, kp);
      }
      return out;
    }
    return v;
  };
  return { value: walk(value, at), removed };
}

/**
 * The settings object sent to agentd. `agentd.mode`, when the user set it explicitly,
 * overrides a `mode` inside `agentd.settings`; otherwise that one, otherwise "ask".
 */
export function effectiveSettings(raw: unknown, explicitMode: string | undefined): { settings: Settings; removed: string[] } {
  const base: Json = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Json) : {};
  const { value, removed } = stripSecrets(base);
  const settings = { ...(value as Settings) };
  if (explicitMode && (MODES as readonly string[]).includes(explicitMode)) settings.mode = explicitMode;
  else if (typeof settings.mode !== 'string' || !(MODES as readonly string[]).includes(settings.mode)) settings.mode = 'ask';
  return { settings, removed };
}

export interface ClientInfo { name: string; title?: string; version?: string }

/** `initializationOptions` for agentd's `initialize`, as PROTOCOL.md describes. */
export function initializationOptions(settings: Settings, clientInfo: ClientInfo) {
  return {
    agent: {
      protocolVersion: 1,
      clientInfo,
      clientCapabilities: {
        fs: { readTextFile: true },
        dirtyBuffers: true,
        diagnostics: true,
        permissions: { ui: true },
        secrets: true,
        saveBuffers: true,
        workspaceSymbols: true,
      },
      settings,
    },
  };
}

/** The `workspace/didChangeConfiguration` params that re-send the settings (agentd reads `settings.agent`). */
export function didChangeConfigurationParams(settings: Settings) {
  return { settings: { agent: settings } };
}

/** Provider presets offered by "agentd: Configure Provider". */
export interface Preset {
  id: string;
  label: string;
  apiType: 'anthropic' | 'openai' | 'gemini';
  baseUrl: string;
  /** Whether the user is asked for a base URL (local servers, proxies). */
  askBaseUrl: boolean;
  keyHint?: string;
}

export const PRESETS: Preset[] = [
  { id: 'anthropic', label: 'Anthropic', apiType: 'anthropic', baseUrl: 'https://api.anthropic.com', askBaseUrl: false, keyHint: 'sk-ant-…' },
  { id: 'openai', label: 'OpenAI', apiType: 'openai', baseUrl: 'https://api.openai.com/v1', askBaseUrl: false, keyHint: 'sk-…' },
  { id: 'gemini', label: 'Gemini', apiType: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com', askBaseUrl: false, keyHint: 'AIza…' },
  { id: 'ollama', label: 'Ollama', apiType: 'openai', baseUrl: 'http://localhost:11434/v1', askBaseUrl: true },
  { id: 'lmstudio', label: 'LM Studio', apiType: 'openai', baseUrl: 'http://localhost:1234/v1', askBaseUrl: true },
  { id: 'llama-server', label: 'llama-server (llama.cpp)', apiType: 'openai', baseUrl: 'http://localhost:8080/v1', askBaseUrl: true },
  { id: 'openrouter', label: 'OpenRouter', apiType: 'openai', baseUrl: 'https://openrouter.ai/api/v1', askBaseUrl: false, keyHint: 'sk-or-…' },
];

/** `agentd.settings` after choosing a provider: it becomes the default, other keys kept. */
export function withProvider(raw: unknown, providerId: string, entry: { apiType: string; baseUrl: string; model?: string }): Settings {
  const s: Settings = raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Settings) } : {};
  const providers = s.providers && typeof s.providers === 'object' && !Array.isArray(s.providers)
    ? { ...(s.providers as Settings) } : {};
  const prev = providers[providerId] && typeof providers[providerId] === 'object' ? (providers[providerId] as Settings) : {};
  const next: Settings = { ...prev, apiType: entry.apiType, baseUrl: entry.baseUrl };
  if (entry.model) next.model = entry.model; else delete next.model;
  providers[providerId] = next;
  s.providers = providers;
  s.provider = providerId;
  return s;
}

/** The SecretStorage key under which a provider's API key is kept; agentd asks for this exact key. */
export function secretStorageKey(providerId: string): string {
  return `agentd.apiKey.${providerId}`;
}

const ENV_TO_API_TYPE: Record<string, string> = {
  ANTHROPIC_API_KEY: 'anthropic',
  OPENAI_API_KEY: 'openai',
  GEMINI_API_KEY: 'gemini',
  OPENROUTER_API_KEY: 'openrouter',
};

/**
 * Provider ids an `agent/x/secrets/get` key may refer to, most specific first. agentd names the
 * secret `agentd.apiKey.<providerId>` (docs/protocol.md), which is taken whole: a key stored for
 * "openai" must never be served for "openai.proxy", another provider at another origin. Other
 * peers may name it by provider id ("openai"), by a path ("providers/openai/apiKey",
 * "apiKey:openai") or by the conventional variable name; a key that names no one provider gets
 * nothing.
 */
export function secretCandidates(key: string): string[] {
  const k = key.trim();
  if (k.startsWith('agentd.apiKey.')) return [k.slice('agentd.apiKey.'.length)].filter(Boolean);
  const out: string[] = [];
  const add = (s: string | undefined) => { if (s && !out.includes(s)) out.push(s); };
  const m = /^(?:providers?[/.:])?([^/.:]+)(?:[/.:](?:api[-_]?key|key))?$/i.exec(k);
  if (m) add(m[1]);
  const m2 = /^(?:api[-_]?key|key)[/.:]([^/.:]+)$/i.exec(k);
  if (m2) add(m2[1]);
  add(ENV_TO_API_TYPE[k.toUpperCase()]);
  return out;
}
