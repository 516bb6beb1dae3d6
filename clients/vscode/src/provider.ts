// "agentd: Configure Provider": preset → base URL (where it applies) → API key (masked, kept in
// SecretStorage under the base URL's origin, so it is never sent to another server; not asked for
// loopback or private servers) → model (from Test connection's list,
// or typed) → a final Test connection whose result is shown.
import * as vscode from 'vscode';
import { needsNoKey } from './pure/net';
import { Keys } from './keys';
import { ClientRequest, ClientRequests, ToDaemon } from './pure/protocol';
import { originOf, Preset, PRESETS, userValue, withProvider } from './pure/settings';

/**
 * What the walk-through needs of the running daemon. Declared here, where it is used, so that this
 * module (part of the language client's bundle, which daemon.ts loads) does not import daemon.ts
 * back: that circle is what issue 27 found.
 */
export interface ProviderDaemon {
  request<M extends ClientRequest>(method: M, params: ClientRequests[M]['params']): Promise<ClientRequests[M]['result']>;
  readonly client?: { isRunning(): boolean };
  readonly state: { message?: string };
}

/** Tells agentd about the provider, then runs its connection test (one GET of the model list). */
async function setAndTest(daemon: ProviderDaemon, p: Preset, baseUrl: string, model?: string): Promise<any> {
  await daemon.request(ToDaemon.providersSet, { providerId: p.id, apiType: p.apiType, baseUrl, model });
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('agentd: testing {0}…', p.label) },
    () => daemon.request(ToDaemon.providersTest, { providerId: p.id }),
  );
}

export async function configureProvider(keys: Keys, daemon: ProviderDaemon) {
  const preset = await vscode.window.showQuickPick(
    PRESETS.map((p) => ({ label: p.label, description: p.baseUrl, preset: p })),
    { title: vscode.l10n.t('agentd: Configure Provider (1/4): provider'), placeHolder: vscode.l10n.t('Which model provider?'), ignoreFocusOut: true },
  );
  if (!preset) return;
  const p = preset.preset;
  const cfg = vscode.workspace.getConfiguration('agentd');
  // The user's own settings: what is written back below goes to the user's settings.json, and a
  // workspace's agentd.settings must neither show up here nor be copied there.
  const userSettings = userValue(cfg.inspect<any>('settings'));
  const current: any = (userSettings ?? {}).providers?.[p.id] ?? {};

  let baseUrl = p.baseUrl;
  if (p.askBaseUrl) {
    const v = await vscode.window.showInputBox({
      title: vscode.l10n.t('agentd: Configure Provider (2/4): base URL'),
      prompt: vscode.l10n.t('The OpenAI-compatible base URL of your {0} server (agentd appends /chat/completions and /models).', p.label),
      value: current.baseUrl ?? p.baseUrl,
      ignoreFocusOut: true,
      validateInput: (s) => { try { const u = new URL(s); return /^https?:$/.test(u.protocol) ? undefined : vscode.l10n.t('Use an http(s) URL.'); } catch { return vscode.l10n.t('Not a URL.'); } },
    });
    if (!v) return;
    baseUrl = v.trim().replace(/\/+$/, '');
  }

  const origin = originOf(baseUrl);
  if (origin && !needsNoKey(baseUrl)) {
    const had = await keys.has(origin);
    const key = await vscode.window.showInputBox({
      title: vscode.l10n.t('agentd: Configure Provider (3/4): API key'),
      prompt: had
        ? vscode.l10n.t("A key for {0} is already stored. Enter a new one to replace it, or leave empty to keep it. It is kept in VS Code's secret storage, never in settings.json, and sent only to {0}.", origin)
        : vscode.l10n.t("Your {0} API key for {1}. It is kept in VS Code's secret storage, never in settings.json, and sent only to {1}.", p.label, origin),
      placeHolder: p.keyHint,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim()) await keys.store(origin, key.trim());
    else if (!had) {
      void vscode.window.showWarningMessage(vscode.l10n.t('agentd: no API key stored for {0}; requests will fail until you add one.', origin));
    }
  }

  // Tell agentd about the provider and list its models.
  let models: string[] = [];
  let testMessage = '';
  const canTest = daemon.client?.isRunning() ?? false;
  if (canTest) {
    try {
      const r = await setAndTest(daemon, p, baseUrl);
      models = Array.isArray(r?.models) ? r.models.map((m: any) => (typeof m === 'string' ? m : m?.id ?? m?.name)).filter(Boolean) : [];
      testMessage = String(r?.message ?? '');
    } catch (e: any) {
      testMessage = String(e?.message ?? e);
    }
  }

  let model: string | undefined;
  if (models.length) {
    // The "type one" entry is known by its own flag, not by its (translated) label.
    const pick = await vscode.window.showQuickPick([
      ...models.map((m) => ({ label: m, model: m })),
      { label: `$(edit) ${vscode.l10n.t('Type a model name…')}`, model: undefined },
    ], {
      title: vscode.l10n.t('agentd: Configure Provider (4/4): model'),
      placeHolder: models.length === 1 ? vscode.l10n.t('1 model found') : vscode.l10n.t('{0} models found', models.length),
      ignoreFocusOut: true,
    });
    if (!pick) return;
    model = pick.model;
  }
  if (!model) {
    model = (await vscode.window.showInputBox({
      title: vscode.l10n.t('agentd: Configure Provider (4/4): model'),
      prompt: testMessage ? vscode.l10n.t('Model name ({0})', testMessage) : vscode.l10n.t('Model name'),
      value: current.model ?? '',
      ignoreFocusOut: true,
    }))?.trim();
    if (model === undefined) return;
  }

  const settings = withProvider(userSettings, p.id, { apiType: p.apiType, baseUrl, model: model || undefined });
  await cfg.update('settings', settings, vscode.ConfigurationTarget.Global);

  if (!daemon.client?.isRunning()) {
    void vscode.window.showWarningMessage(vscode.l10n.t('agentd: {0} saved, but agentd is not running, so the connection was not tested. {1}', p.label, daemon.state.message ?? '').trim());
    return;
  }
  try {
    const r = await setAndTest(daemon, p, baseUrl, model || undefined);
    const n = Array.isArray(r?.models) ? r.models.length : 0;
    if (r?.ok) {
      const found = n === 1 ? vscode.l10n.t('agentd: {0} works: 1 model found.', p.label) : vscode.l10n.t('agentd: {0} works: {1} models found.', p.label, n);
      const using = model ? ` ${vscode.l10n.t('Using {0}.', model)}` : '';
      void vscode.window.showInformationMessage(`${found}${using} ${r.message ?? ''}`.trim());
    } else {
      const again: vscode.MessageItem = { title: vscode.l10n.t('Configure Again') };
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0} test failed: {1}', p.label, r?.message ?? vscode.l10n.t('no answer')), again)
        .then((c) => c === again && vscode.commands.executeCommand('agentd.configureProvider'));
    }
  } catch (e: any) {
    void vscode.window.showErrorMessage(vscode.l10n.t('agentd: testing {0} failed: {1}', p.label, e?.message ?? e));
  }
}
