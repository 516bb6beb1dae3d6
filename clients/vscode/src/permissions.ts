// agentd's `agent/session/request_permission`: shown in the chat view, or as a notification
// with the same four buttons when the view is not visible. Cancelling the turn (or agentd
// withdrawing the request) answers `cancelled`.
import * as vscode from 'vscode';
import { randomUUID } from 'crypto';
import { Chat } from './chat';
import { buttonsFor, optionForButton, PermissionButton, PermissionOption, commandOf, savesOf, savesText, visible } from './pure/viewmodel';

interface Pending {
  sessionId: string;
  options: PermissionOption[];
  resolve: (r: any) => void;
}

export class Permissions {
  private readonly pending = new Map<string, Pending>();

  constructor(private readonly chat: Chat, private readonly viewVisible: () => boolean) {
    chat.onCancelled = (sessionId) => this.cancelAll(sessionId);
  }

  ask(params: any, token: vscode.CancellationToken): Promise<any> {
    const requestId = randomUUID();
    const options: PermissionOption[] = Array.isArray(params?.options) ? params.options : [];
    const sessionId = String(params?.sessionId ?? '');
    return new Promise((resolve) => {
      this.pending.set(requestId, { sessionId, options, resolve });
      token.onCancellationRequested(() => this.finish(requestId, { outcome: { outcome: 'cancelled' } }, 'withdrawn'));
      this.chat.dispatch({ type: 'permissionAsked', requestId, params });
      if (!this.viewVisible()) void this.notify(requestId, params, options);
    });
  }

  private async notify(requestId: string, params: any, options: PermissionOption[]) {
    const tc = params?.toolCall ?? {};
    const { command, cwd } = commandOf(tc.rawInput);
    const files = Array.isArray(tc.content) ? tc.content.filter((c: any) => c?.type === 'diff').map((c: any) => c.path) : [];
    let detail = visible(String(tc.title ?? 'agentd asks for permission'));
    if (command) detail += ` — ${command}${cwd ? ` (in ${cwd})` : ''}`;
    else if (files.length) detail += ` — ${files.map((f: unknown) => visible(String(f))).join(', ')}`;
    const saves = savesText(savesOf(tc._meta?.['agentd/saves']));
    if (saves) detail += `. ${saves}`;
    const buttons = buttonsFor(options);
    const choice = await vscode.window.showWarningMessage(`agentd: ${detail}`, ...buttons);
    if (choice) this.answer(requestId, choice as PermissionButton);
  }

  answer(requestId: string, button: PermissionButton) {
    const p = this.pending.get(requestId);
    if (!p) return;
    const optionId = optionForButton(p.options, button);
    if (!optionId) return;
    this.finish(requestId, { outcome: { outcome: 'selected', optionId } }, button);
  }

  private finish(requestId: string, result: any, label: string) {
    const p = this.pending.get(requestId);
    if (!p) return;
    this.pending.delete(requestId);
    p.resolve(result);
    this.chat.dispatch({ type: 'permissionAnswered', requestId, answer: label });
  }

  cancelAll(sessionId?: string) {
    for (const [id, p] of [...this.pending]) {
      if (!sessionId || p.sessionId === sessionId) this.finish(id, { outcome: { outcome: 'cancelled' } }, 'cancelled');
    }
  }

  /** agentd went away: its requests will never be answered, so mark them closed. */
  dropAll() { this.cancelAll(); }
}
