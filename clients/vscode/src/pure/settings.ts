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

/** The part of VS Code's `WorkspaceConfiguration.inspect()` result the client reads. */
export interface Inspected<T> {
  defaultValue?: T;
  globalValue?: T;
  workspaceValue?: T;
  workspaceFolderValue?: T;
}

/**
 * The settings (under `agentd.`) that the client takes from the user's own settings only, never
 * from a workspace or folder: each of them can loosen what agentd may do (the daemon binary it
 * starts, the mode, and `agentd.settings` with its providers, base URLs, key variables, shell and
 * MCP servers), and a repository's `.vscode/settings.json` is written by whoever wrote the
 * repository. package.json gives each `application` scope and lists it in
 * `capabilities.untrustedWorkspaces.restrictedConfigurations`; a unit test holds the two together.
 */
export const USER_ONLY_SETTINGS = ['path', 'settings', 'mode'] as const;

/**
 * The user's value of a setting (user or remote-machine settings), else its default; a workspace
 * or folder value is never used, even where VS Code would let it through (an older host, or a
 * scope changed by a later edit of package.json).
 */
export function userValue<T>(i: Inspected<T> | undefined): T | undefined {
  return i?.globalValue ?? i?.defaultValue;
}

/** The mode the user set explicitly in their own settings (not the default), if any. */
export function userMode(i: Inspected<string> | undefined): string | undefined {
  return i?.globalValue;
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
        editorState: true,
        diagnostics: true,
        permissions: { ui: true },
        secrets: true,
        saveBuffers: true,
        workspaceSymbols: true,
        // The chat shows notice updates: agentd sends no window/showMessage copy.
        notices: true,
        elicitation: { form: {}, url: {} },
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
  { id: 'ollama', label: 'Ollama', apiType: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', askBaseUrl: true },
  { id: 'lmstudio', label: 'LM Studio', apiType: 'openai', baseUrl: 'http://127.0.0.1:1234/v1', askBaseUrl: true },
  { id: 'llama-server', label: 'llama-server (llama.cpp)', apiType: 'openai', baseUrl: 'http://127.0.0.1:8080/v1', askBaseUrl: true },
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

/**
 * The origin (scheme://host[:port], lowercased, the port only when not the scheme's default) of an
 * http(s) URL, written as agentd writes it; undefined for anything else. A key is stored and
 * served by origin, so a key saved for one server is never sent to another.
 */
export function originOf(rawUrl: string): string | undefined {
  let u: URL;
  try { u = new URL(rawUrl.trim()); } catch { return undefined; }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  if (!u.hostname) return undefined;
  let host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (!host) return undefined;
  // URL already drops default ports and brackets IPv6 literals (in their canonical form).
  return `${u.protocol}//${host}${u.port ? `:${u.port}` : ''}`;
}

export const SECRET_PREFIX = 'agentd.apiKey.';

/** The SecretStorage key under which the API key for an origin is kept; agentd asks for this exact key. */
export function secretStorageKey(origin: string): string {
  return `${SECRET_PREFIX}${origin}`;
}

/**
 * The origin an `agent/x/secrets/get` key asks for, or undefined. Only `agentd.apiKey.<origin>`
 * with the origin in agentd's own normal form is served: a provider id ("agentd.apiKey.openai",
 * the old scheme), a full URL or a path names no one server, so it gets nothing.
 */
export function originOfSecretKey(key: string): string | undefined {
  if (!key.startsWith(SECRET_PREFIX)) return undefined;
  const o = key.slice(SECRET_PREFIX.length);
  return o && originOf(o) === o ? o : undefined;
}

/**
 * Keys stored by earlier versions under a provider id (`agentd.apiKey.openai`) that may move to
 * an origin: only the presets whose server the user could not change (the key was typed for that
 * vendor's own API). A key stored for a local preset was for whatever URL it had then, which is
 * not known: it is never served, and "agentd: Remove Key" offers to delete it.
 */
export function legacyKeyMigrations(): { from: string; to: string; label: string }[] {
  return PRESETS.filter((p) => !p.askBaseUrl).map((p) => ({ from: secretStorageKey(p.id), to: secretStorageKey(originOf(p.baseUrl)!), label: p.label }));
}

/** Old provider-id keys that are never served (local presets' keys of unknown origin). */
export function legacyUnusedKeys(): string[] {
  return PRESETS.filter((p) => p.askBaseUrl).map((p) => secretStorageKey(p.id));
}
