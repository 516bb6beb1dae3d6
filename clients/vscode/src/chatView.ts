// The chat view: a webview view in agentd's own view container. The host posts the state
// once (snapshot) and then every event; the webview reduces them with the same reducer.
import * as vscode from 'vscode';
import { randomBytes } from 'crypto';
import { Chat } from './chat';
import { DiffContent } from './diff';
import { Permissions } from './permissions';
import { PermissionButton } from './pure/viewmodel';
import { Review } from './review';

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
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style}">
<title>agentd</title></head>
<body><div id="app"></div>
<script nonce="${nonce}" src="${script}"></script></body></html>`;
    view.onDidDispose(() => { if (this.view === view) { this.view = undefined; this.ready = false; } });
    view.webview.onDidReceiveMessage((m) => this.onMessage(m).catch((e) => {
      void vscode.window.showErrorMessage(`agentd: ${e?.message ?? e}`);
    }));
  }

  private async onMessage(m: any) {
    switch (m?.type) {
      case 'ready':
        this.ready = true;
        await this.view?.webview.postMessage({ type: 'snapshot', state: this.chat.state });
        return;
      case 'prompt':
        if (typeof m.text === 'string' && m.text.trim()) await this.chat.prompt(m.text.trim());
        return;
      case 'cancel':
        this.chat.cancel();
        return;
      case 'newChat':
        await this.chat.newChat();
        return;
      case 'setConfig':
        await this.chat.setConfig(String(m.configId), String(m.value));
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
        try { sessions = await this.chat.listSessions(); } catch (e: any) { error = String(e?.message ?? e); }
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

  dispose() { this.disposables.forEach((d) => d.dispose()); }
}
