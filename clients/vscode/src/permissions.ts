// agentd's `agent/session/request_permission`: shown in the chat view, or as a notification
// with the same four buttons (and one that opens the chat) when its chat is not on screen.
// Cancelling the turn (or agentd withdrawing the request) answers `cancelled`.
import * as vscode from 'vscode';
import { randomUUID } from 'crypto';
import { Chats } from './chats';
import { buttonLabel, buttonsFor, denyWithFeedbackLabel, feedbackOption, feedbackOutcome, optionForButton, PermissionButton, PermissionOption, commandOf, Extras, extrasOf, extrasText, savesOf, savesText, serverOf, visible } from './pure/viewmodel';

interface Pending {
  sessionId: string;
  options: PermissionOption[];
  params: any;
  notified?: boolean;
  resolve: (r: any) => void;
}

export class Permissions {
  private readonly pending = new Map<string, Pending>();

  /** shown: whether the session's chat is on screen; open: brings it there. */
  constructor(private readonly chats: Chats, private readonly shown: (sessionId: string) => boolean, private readonly open: (sessionId: string) => unknown) {
    chats.onCancelled = (sessionId) => this.cancelAll(sessionId);
  }

  ask(params: any, token: vscode.CancellationToken): Promise<any> {
    const requestId = randomUUID();
    const options: PermissionOption[] = Array.isArray(params?.options) ? params.options : [];
    const sessionId = String(params?.sessionId ?? '');
    return new Promise((resolve) => {
      this.pending.set(requestId, { sessionId, options, params, resolve });
      this.publish();
      token.onCancellationRequested(() => this.finish(requestId, { outcome: { outcome: 'cancelled' } }, 'withdrawn'));
      this.chats.dispatchTo(sessionId, { type: 'permissionAsked', requestId, params });
      if (!this.shown(sessionId)) void this.notify(requestId, params, options);
      else setTimeout(() => this.shownInView(requestId, false, 'no answer from the chat view'), 3000);
    });
  }

  /**
   * The chat view says whether it could bring the request's card into sight. A card the user
   * cannot see (or a view that never answered) gets the notification, even though the view is open.
   */
  shownInView(requestId: string, visible: boolean, _why = '') {
    const p = this.pending.get(requestId);
    if (!p) return;
    if (visible) { p.notified = true; return; }
    if (p.notified) return;
    void this.notify(requestId, p.params, p.options);
  }

  /** The `agentd.permissionPending` context key, for the accept/deny keybindings. */
  private publish() {
    void vscode.commands.executeCommand('setContext', 'agentd.permissionPending', this.pending.size > 0);
  }

  /**
   * The newest request still waiting, for the accept/deny keybindings: of a chat on screen when
   * there is one, so that a key never answers a request the user cannot see beside one they can.
   */
  latest(): string | undefined {
    const all = [...this.pending];
    const seen = all.filter(([, p]) => this.shown(p.sessionId));
    return (seen.length ? seen : all).map(([id]) => id).pop();
  }

  private async notify(requestId: string, params: any, options: PermissionOption[]) {
    const p = this.pending.get(requestId);
    if (p) p.notified = true;
    const tc = params?.toolCall ?? {};
    const { command, cwd } = commandOf(tc.rawInput);
    const files = Array.isArray(tc.content) ? tc.content.filter((c: any) => c?.type === 'diff').map((c: any) => c.path) : [];
    let detail = visible(String(tc.title ?? vscode.l10n.t('agentd asks for permission')));
    const server = serverOf(tc._meta);
    if (server) detail = vscode.l10n.t('[MCP server {0}] {1}', server, detail);
    if (command) detail = cwd ? vscode.l10n.t('{0} — {1} (in {2})', detail, command, cwd) : vscode.l10n.t('{0} — {1}', detail, command);
    else if (files.length) detail = vscode.l10n.t('{0} — {1}', detail, files.map((f: unknown) => visible(String(f))).join(', '));
    // The env, headers and stdin are part of what the answer grants: the notification says them
    // too, as the card has them (the request's own, else the same call's tool update).
    const card = this.chats.bySession(p?.sessionId ?? String(params?.sessionId ?? ''))?.state.items
      .find((it) => it.kind === 'permission' && it.id === requestId) as Extras | undefined;
    const extras = extrasText(card ?? extrasOf(tc.rawInput));
    if (extras) detail = vscode.l10n.t('{0}. {1}', detail, extras);
    const saves = savesText(savesOf(tc._meta?.['agentd/saves']));
    if (saves) detail = vscode.l10n.t('{0}. {1}', detail, saves);
    // The answer is the very item clicked, known by its id: labels are in the display language.
    // A toast has room for about four short buttons (six were cut to "All…"): Allow once and
    // Deny, the rest one click away in a list that names each in full, and the chat.
    const all = buttonsFor(options);
    const direct = (['allow_once', 'deny'] as PermissionButton[]).filter((b) => all.includes(b));
    const more = all.length > direct.length || !!feedbackOption(options);
    const items: Array<vscode.MessageItem & { id: PermissionButton | 'more' | 'open' }> = direct.map((id) => ({ title: buttonLabel(id), id }));
    if (more) items.push({ title: vscode.l10n.t('More Answers…'), id: 'more' });
    // Shows the request's chat (the card there waits for the answer).
    items.push({ title: vscode.l10n.t('Open Chat'), id: 'open' });
    const choice = await vscode.window.showWarningMessage(vscode.l10n.t('agentd: {0}', detail), ...items);
    if (choice?.id === 'open') { if (p) this.open(p.sessionId); return; }
    if (choice?.id === 'more') await this.pickAnswer(requestId, detail);
    else if (choice) this.answer(requestId, choice.id);
  }

  /** Every answer to a request, each named in full (its scope too), in a list; dismissed, the question is put again. */
  private async pickAnswer(requestId: string, detail: string) {
    const p = this.pending.get(requestId);
    if (!p) return;
    type Pick = vscode.QuickPickItem & { id: PermissionButton | 'feedback' };
    const picks: Pick[] = buttonsFor(p.options).map((id) => {
      const name = p.options.find((o) => o.optionId === optionForButton(p.options, id))?.name;
      return { label: buttonLabel(id), description: name && name !== buttonLabel(id) ? visible(String(name)) : undefined, id };
    });
    if (feedbackOption(p.options)) picks.push({ label: denyWithFeedbackLabel(), id: 'feedback' });
    const pick = await vscode.window.showQuickPick(picks, { title: vscode.l10n.t('agentd: {0}', detail), placeHolder: vscode.l10n.t('Answer the permission request') });
    if (!this.pending.has(requestId)) return;
    if (!pick) { void this.notify(requestId, p.params, p.options); return; }
    if (pick.id === 'feedback') await this.denyWithFeedback(requestId);
    else this.answer(requestId, pick.id);
  }

  /** "Deny with feedback…": asks for the correction, then denies once carrying it to the model. */
  async denyWithFeedback(requestId: string) {
    const p = this.pending.get(requestId);
    const optionId = p && feedbackOption(p.options);
    if (!optionId) return;
    const text = await vscode.window.showInputBox({
      title: vscode.l10n.t('agentd: Deny with feedback'),
      prompt: vscode.l10n.t('Tell agentd what to do instead; it reads this and goes on'),
      placeHolder: vscode.l10n.t('e.g. No, use a map instead'),
      ignoreFocusOut: true,
    });
    if (text === undefined) return; // dismissed: the question stays open
    this.finish(requestId, feedbackOutcome(optionId, text), text.trim() ? 'feedback' : 'deny', text.trim() || undefined);
  }

  answer(requestId: string, button: PermissionButton) {
    const p = this.pending.get(requestId);
    if (!p) return;
    const optionId = optionForButton(p.options, button);
    if (!optionId) return;
    this.finish(requestId, { outcome: { outcome: 'selected', optionId } }, button);
  }

  /** `answer` is what the transcript records: a button id, 'feedback', 'withdrawn' or 'cancelled'. */
  private finish(requestId: string, result: any, answer: string, feedback?: string) {
    const p = this.pending.get(requestId);
    if (!p) return;
    this.pending.delete(requestId);
    this.publish();
    p.resolve(result);
    this.chats.dispatchTo(p.sessionId, { type: 'permissionAnswered', requestId, answer, feedback });
  }

  cancelAll(sessionId?: string) {
    for (const [id, p] of [...this.pending]) {
      if (!sessionId || p.sessionId === sessionId) this.finish(id, { outcome: { outcome: 'cancelled' } }, 'cancelled');
    }
  }

  /** agentd went away: its requests will never be answered, so mark them closed. */
  dropAll() { this.cancelAll(); }
}
