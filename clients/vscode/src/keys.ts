// API keys in VS Code's SecretStorage, one per origin (`agentd.apiKey.<origin>`), as agentd asks
// for them (agent/x/secrets/get): a key saved for one server is never served for another.
// SecretStorage cannot list its keys, so the stored origins are also kept (names only, no
// secrets) in globalState, for "agentd: Remove Key".
import * as vscode from 'vscode';
import { legacyKeyMigrations, legacyUnusedKeys, originOfSecretKey, secretStorageKey } from './pure/settings';

const INDEX = 'agentd.keyOrigins';

export class Keys {
  constructor(private readonly context: vscode.ExtensionContext) {}

  private get secrets() { return this.context.secrets; }

  origins(): string[] {
    const v = this.context.globalState.get<unknown>(INDEX);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  }

  private async setOrigins(list: string[]) {
    await this.context.globalState.update(INDEX, [...new Set(list)].sort());
  }

  has(origin: string): Thenable<boolean> {
    return this.secrets.get(secretStorageKey(origin)).then((v) => !!v);
  }

  async store(origin: string, key: string) {
    await this.secrets.store(secretStorageKey(origin), key);
    await this.setOrigins([...this.origins(), origin]);
  }

  async remove(storageKey: string) {
    await this.secrets.delete(storageKey);
    const o = originOfSecretKey(storageKey);
    if (o) await this.setOrigins(this.origins().filter((x) => x !== o));
  }

  /** The value for an agent/x/secrets/get key: only `agentd.apiKey.<origin>`, else nothing. */
  async serve(key: string): Promise<string | undefined> {
    const origin = originOfSecretKey(key);
    if (!origin) return undefined;
    return (await this.secrets.get(secretStorageKey(origin))) || undefined;
  }

  /**
   * Keys stored by earlier versions under a provider id: a hosted preset's key moves to that
   * vendor's origin (where it was typed for) unless that origin already has one; others stay
   * where they are, never served, until the user removes them.
   */
  async migrate() {
    for (const m of legacyKeyMigrations()) {
      const v = await this.secrets.get(m.from);
      if (!v) continue;
      const o = originOfSecretKey(m.to)!;
      if (!(await this.has(o))) await this.store(o, v);
      await this.secrets.delete(m.from);
    }
  }

  /** What "agentd: Remove Key" offers: stored origins, then old keys that are never served. */
  async removable(): Promise<{ label: string; description: string; storageKey: string }[]> {
    const out = [];
    for (const o of this.origins()) {
      if (await this.has(o)) out.push({ label: o, description: vscode.l10n.t('sent only to this server'), storageKey: secretStorageKey(o) });
    }
    for (const k of legacyUnusedKeys()) {
      if (await this.secrets.get(k)) out.push({ label: k.slice('agentd.apiKey.'.length), description: vscode.l10n.t('old key saved by provider name; no longer used'), storageKey: k });
    }
    return out;
  }
}

export async function removeKey(keys: Keys) {
  const items = await keys.removable();
  if (!items.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no API keys are stored.'));
    return;
  }
  const pick = await vscode.window.showQuickPick(items, { title: vscode.l10n.t('agentd: Remove Key'), placeHolder: vscode.l10n.t("Which server's key should be removed?") });
  if (!pick) return;
  await keys.remove(pick.storageKey);
  void vscode.window.showInformationMessage(vscode.l10n.t('agentd: the key for {0} was removed.', pick.label));
}
