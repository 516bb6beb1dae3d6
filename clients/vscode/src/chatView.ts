// The chat view: a webview view in agentd's own view container. The host posts the state
// once (snapshot) and then every event; the webview reduces them with the same reducer.
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import { Chat } from './chat';
import { requestError } from './pure/errors';
import { ComposerContext } from './context';
import { Chip } from './pure/mentions';
import { ContentBlock } from './pure/protocol';
import { DiffContent } from './diff';
import { Permissions } from './permissions';
import { PermissionButton } from './pure/viewmodel';
import { Review } from './review';
import { bundleScript } from './pure/l10n';

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'agentd.chat';
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly disposables: vscode.Disposable[] = [];
  permissions: Permissions | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly chat: Chat,
    private readonly diffs: DiffContent,
    private readonly review: Review,
  ) {
    this.disposables.push(chat.onEvent((event) => {
      if (this.ready) void this.view?.webview.postMessage({ type: 'event', event });
    }));
  }

  private readonly context = new ComposerContext((m) => this.post(m));

  /** A message to the webview, dropped when it is not there. */
  post(m: unknown) {
    if (this.ready) void this.view?.webview.postMessage(m);
  }

  /** Adds a chip (a selection, a file) to the input and focuses it. */
  async attach(chip: Chip) {
    await this.reveal(false);
    // A freshly created view is ready only after its script ran.
    for (let i = 0; i < 50 && !this.ready; i++) await new Promise((r) => setTimeout(r, 100));
    this.post({ type: 'attach', chip });
    this.post({ type: 'focusInput' });
  }

  get visible(): boolean {
    return !!this.view && this.view.visible;
  }

  async reveal(focusInput = false) {
    await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    if (focusInput) void this.view?.webview.postMessage({ type: 'focusInput' });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    const nonce = randomBytes(16).toString('base64');
    const script = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    const style = view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${view.webview.cspSource}`,
      `font-src ${view.webview.cspSource}`,
      `img-src ${view.webview.cspSource} data:`,
      `script-src 'nonce-${nonce}'`,
    ].join('; ');
    view.webview.html = `<!DOCTYPE html>
<html lang="${vscode.env.language}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style}">
<title>agentd</title></head>
<body><div id="app"></div>
${bundleScript(vscode.l10n.bundle)}
<script nonce="${nonce}" src="${script}"></script></body></html>`;
    view.onDidDispose(() => { if (this.view === view) { this.view = undefined; this.ready = false; } });
    view.webview.onDidReceiveMessage((m) => this.onMessage(m).catch((e) => {
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0}', requestError(e, 'do that').title));
    }));
  }

  private async onMessage(m: any) {
    switch (m?.type) {
      case 'ready':
        this.ready = true;
        await this.view?.webview.postMessage({ type: 'snapshot', state: this.chat.state });
        this.context.send();
        return;
      case 'prompt':
        if (typeof m.text === 'string' && m.text.trim()) await this.chat.prompt(m.text.trim(), contextBlocks(m.context));
        return;
      case 'mentionQuery': {
        const items = await this.context.mentions(String(m.query ?? ''), String(m.sigil ?? '@')).catch(() => []);
        this.post({ type: 'mentions', token: m.token, items });
        return;
      }
      case 'cancel':
        this.chat.cancel();
        return;
      case 'newChat':
        await this.chat.newChat();
        return;
      case 'setConfig':
        await this.chat.setConfig(String(m.configId), String(m.value));
        return;
      case 'permissionShown':
        this.permissions?.shownInView(String(m.requestId), m.visible === true);
        return;
      case 'code':
        if (typeof m.code === 'string' && (m.action === 'insert' || m.action === 'apply')) await insertCode(m.code, m.action);
        return;
      case 'permission':
        this.permissions?.answer(String(m.requestId), m.button as PermissionButton);
        return;
      case 'denyWithFeedback':
        await this.permissions?.denyWithFeedback(String(m.requestId));
        return;
      case 'steer':
        if (typeof m.text === 'string' && m.text.trim()) await this.chat.steer(m.text.trim());
        return;
      case 'openDiff': {
        const it: any = this.chat.state.items[m.index];
        const d = it?.diffs?.[m.diff ?? 0];
        if (d) await this.diffs.open(d.path, d.oldText, d.newText);
        return;
      }
      case 'openChange': {
        // The file against its text before the turn while it is under review; else the file itself.
        const p = String(m.path ?? '');
        if (p && !(await this.review.openDiff(p))) await vscode.window.showTextDocument(vscode.Uri.file(p), { preview: true });
        return;
      }
      case 'restoreCheckpoint':
        await this.chat.restoreCheckpoint(typeof m.checkpointId === 'string' ? m.checkpointId : undefined);
        return;
      case 'openFile':
        if (typeof m.path === 'string') await vscode.window.showTextDocument(vscode.Uri.file(m.path), { preview: true });
        return;
      case 'listSessions': {
        let sessions: any[] = [];
        let error: string | undefined;
        try { sessions = await this.chat.listSessions(); } catch (e: any) { error = requestError(e, 'list the chats').title; }
        await this.view?.webview.postMessage({ type: 'sessions', sessions, error });
        return;
      }
      case 'loadSession':
        await this.chat.loadSession(String(m.sessionId), m.title);
        return;
      case 'command':
        if (['agentd.configureProvider', 'agentd.showLogs', 'agentd.restart', 'agentd.keepAll', 'agentd.undoAll', 'agentd.fork'].includes(m.command)) {
          await vscode.commands.executeCommand(m.command);
        }
        return;
    }
  }

  dispose() { this.context.dispose(); this.disposables.forEach((d) => d.dispose()); }
}

/**
 * A code block's Insert (at the cursor, or over the selection) and Apply (over the selection, or
 * the whole file when nothing is selected) into the active editor: one edit, undoable, unsaved.
 */
async function insertCode(code: string, action: 'insert' | 'apply') {
  const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
  if (!ed) {
    void vscode.window.showInformationMessage(vscode.l10n.t('agentd: open a file to insert the code into.'));
    return;
  }
  const doc = ed.document;
  const whole = new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length));
  const target = action === 'apply' && ed.selection.isEmpty ? whole : ed.selection;
  const ok = await ed.edit((b) => b.replace(target, code));
  if (!ok) void vscode.window.showWarningMessage(vscode.l10n.t('agentd: the editor refused the change (it may be read-only).'));
  else await vscode.window.showTextDocument(doc, ed.viewColumn);
}

/** The content blocks of the chips the webview sent, only of the kinds a chip makes. */
function contextBlocks(v: unknown): ContentBlock[] {
  if (!Array.isArray(v)) return [];
  return v.filter((b: any) => (b?.type === 'resource_link' && typeof b.uri === 'string')
    || (b?.type === 'resource' && typeof b.resource?.uri === 'string' && typeof b.resource?.text === 'string'));
}
