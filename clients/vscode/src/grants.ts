// The remembered permission answers of the chat's session (issue 33 item 4): listed by what they
// cover and their scope, and revoked one at a time, so the next such call is asked again.
import * as vscode from 'vscode';
import type { Daemon } from './daemon';
import { GrantWire, ToDaemon } from './pure/protocol';

/** The quick pick row of one grant: picking it revokes it, and the row names the scope it leaves. */
export function grantItem(g: GrantWire): vscode.QuickPickItem & { grant: GrantWire } {
  const scope = g.scope === 'project' ? vscode.l10n.t('this project') : vscode.l10n.t('this session');
  return { label: g.label, description: vscode.l10n.t('Revoke for {0}', scope), grant: g };
}

export async function manageGrants(daemon: Daemon, sessionId: string | undefined) {
  if (!sessionId) {
    void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no session yet; send a prompt first.'));
    return;
  }
  let grants: GrantWire[];
  try {
    grants = (await daemon.request(ToDaemon.grantsList, { sessionId })).grants ?? [];
  } catch (e: any) {
    void vscode.window.showErrorMessage(vscode.l10n.t('agentd: could not list the remembered permissions: {0}', e?.message ?? String(e)));
    return;
  }
  if (!grants.length) {
    void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no remembered permissions; every change is asked about or decided by the mode.'));
    return;
  }
  const pick = await vscode.window.showQuickPick(grants.map(grantItem), {
    title: vscode.l10n.t('agentd: Remembered Permissions'), placeHolder: vscode.l10n.t('Pick one to revoke it: the next such call is asked again'),
  });
  if (!pick) return;
  try {
    const r = await daemon.request(ToDaemon.grantsRevoke, { sessionId, grantId: pick.grant.grantId });
    void vscode.window.showInformationMessage(r.revoked
      ? vscode.l10n.t('agentd: revoked "{0}"; it will be asked again.', pick.grant.label)
      : vscode.l10n.t('agentd: "{0}" was already gone.', pick.grant.label));
  } catch (e: any) {
    void vscode.window.showErrorMessage(vscode.l10n.t('agentd: could not revoke: {0}', e?.message ?? String(e)));
  }
}
