// "agentd: Configure Provider": preset → base URL (where it applies) → API key (masked, kept in
// SecretStorage under the base URL's origin, so it is never sent to another server; not asked for
// loopback or private servers) → model (from Test connection's list,
// or typed) → a final Test connection whose result is shown.
import * as vscode from 'vscode';
import { Daemon } from './daemon';
import { needsNoKey } from './pure/net';
import { Keys } from './keys';
import { ToDaemon } from './pure/protocol';
import { originOf, Preset, PRESETS, withProvider } from './pure/settings';

/** Tells agentd about the provider, then runs its connection test (one GET of the model list). */
async function setAndTest(daemon: Daemon, p: Preset, baseUrl: string, model?: string): Promise<any> {
  await daemon.request(ToDaemon.providersSet, { providerId: p.id, apiType: p.apiType, baseUrl, model });
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `agentd: testing ${p.label}…` },
    () => daemon.request(ToDaemon.providersTest, { providerId: p.id }),
  );
}

export async function configureProvider(keys: Keys, daemon: Daemon) {
  const preset = await vscode.window.showQuickPick(
    PRESETS.map((p) => ({ label: p.label, description: p.baseUrl, preset: p })),
    { title: 'agentd: Configure Provider (1/4): provider', placeHolder: 'Which model provider?', ignoreFocusOut: true },
  );
  if (!preset) return;
  const p = preset.preset;
  const cfg = vscode.workspace.getConfiguration('agentd');
  const current: any = (cfg.get<any>('settings') ?? {}).providers?.[p.id] ?? {};

  let baseUrl = p.baseUrl;
  if (p.askBaseUrl) {
    const v = await vscode.window.showInputBox({
      title: 'agentd: Configure Provider (2/4): base URL',
      prompt: `The OpenAI-compatible base URL of your ${p.label} server (agentd appends /chat/completions and /models).`,
      value: current.baseUrl ?? p.baseUrl,
      ignoreFocusOut: true,
      validateInput: (s) => { try { const u = new URL(s); return /^https?:$/.test(u.protocol) ? undefined : 'Use an http(s) URL.'; } catch { return 'Not a URL.'; } },
    });
    if (!v) return;
    baseUrl = v.trim().replace(/\/+$/, '');
  }

  const origin = originOf(baseUrl);
  if (origin && !needsNoKey(baseUrl)) {
    const had = await keys.has(origin);
    const key = await vscode.window.showInputBox({
      title: 'agentd: Configure Provider (3/4): API key',
      prompt: had
        ? `A key for ${origin} is already stored. Enter a new one to replace it, or leave empty to keep it. It is kept in VS Code's secret storage, never in settings.json, and sent only to ${origin}.`
        : `Your ${p.label} API key for ${origin}. It is kept in VS Code's secret storage, never in settings.json, and sent only to ${origin}.`,
      placeHolder: p.keyHint,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key.trim()) await keys.store(origin, key.trim());
    else if (!had) {
      void vscode.window.showWarningMessage(`agentd: no API key stored for ${origin}; requests will fail until you add one.`);
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
  const typeOwn = '$(edit) Type a model name…';
  if (models.length) {
    const pick = await vscode.window.showQuickPick([...models.map((m) => ({ label: m })), { label: typeOwn }], {
      title: 'agentd: Configure Provider (4/4): model', placeHolder: `${models.length} models found`, ignoreFocusOut: true,
    });
    if (!pick) return;
    model = pick.label === typeOwn ? undefined : pick.label;
  }
  if (!model) {
    model = (await vscode.window.showInputBox({
      title: 'agentd: Configure Provider (4/4): model',
      prompt: testMessage ? `Model name (${testMessage})` : 'Model name',
      value: current.model ?? '',
      ignoreFocusOut: true,
    }))?.trim();
    if (model === undefined) return;
  }

  const settings = withProvider(cfg.get('settings'), p.id, { apiType: p.apiType, baseUrl, model: model || undefined });
  await cfg.update('settings', settings, vscode.ConfigurationTarget.Global);

  if (!daemon.client?.isRunning()) {
    void vscode.window.showWarningMessage(`agentd: ${p.label} saved, but agentd is not running, so the connection was not tested. ${daemon.state.message ?? ''}`);
    return;
  }
  try {
    const r = await setAndTest(daemon, p, baseUrl, model || undefined);
    const n = Array.isArray(r?.models) ? r.models.length : 0;
    if (r?.ok) {
      void vscode.window.showInformationMessage(`agentd: ${p.label} works: ${n} model${n === 1 ? '' : 's'} found${model ? `, using ${model}` : ''}. ${r.message ?? ''}`.trim());
    } else {
      void vscode.window.showErrorMessage(`agentd: ${p.label} test failed: ${r?.message ?? 'no answer'}`, 'Configure Again')
        .then((c) => c && vscode.commands.executeCommand('agentd.configureProvider'));
    }
  } catch (e: any) {
    void vscode.window.showErrorMessage(`agentd: testing ${p.label} failed: ${e?.message ?? e}`);
  }
}
