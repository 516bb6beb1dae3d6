// agentd for VS Code: starts the agentd daemon with vscode-languageclient, serves its reverse
// requests from the editor's state, and shows the conversations in a chat view and editor tabs.
import * as vscode from 'vscode';
import { McpView } from './mcpView';
import type { McpNode } from './pure/mcplist';
import { McpSignIn, openPage } from './mcpSignIn';
import { Chats } from './chats';
import { ChatView } from './chatView';
import { clientBundleLoad, Daemon, loadClientBundle } from './daemon';
import { DIFF_SCHEME, DiffContent } from './diff';
import { Permissions } from './permissions';
import { Programs } from './programs';
import { Keys, removeKey } from './keys';
import { manageGrants } from './grants';
import { ContentBlock, ToDaemon } from './pure/protocol';
import { Review } from './review';
import { registerInline } from './inline';
import { registerExplain } from './explain';
import { registerDictation } from './dictate';
import { PermissionButton } from './pure/viewmodel';
import { documentChip, selectionChip } from './context';
import { configureHost } from './pure/l10n';

let daemon: Daemon | undefined;

export async function activate(context: vscode.ExtensionContext) {
  const t0 = performance.now();
  configureHost(vscode.l10n.bundle);
  const output = vscode.window.createOutputChannel('agentd');
  context.subscriptions.push(output);
  // What activation costs the extension host: the synchronous part of activate() (which blocks
  // the host) and the whole of it (which does not). The bundle's own stamp (its banner, run once
  // the bundle is compiled) to the call of activate() also holds the host's creating the
  // extension's context, which waits on the window, so it is given apart. How long VS Code took to
  // load the code is the host's to report (Developer: Show Running Extensions); its private
  // performance marks are not an API and are not read here.
  const loadStart = (globalThis as any).__agentdLoadStart as number | undefined;
  const bundleToActivate = loadStart === undefined ? NaN : t0 - loadStart;
  let activateCall = NaN;
  const ms = (n: number) => (Number.isNaN(n) ? '?' : n.toFixed(1));
  queueMicrotask(() => { activateCall = performance.now() - t0; });

  const keys = new Keys(context);
  // Before agentd starts, so it never asks for a key that has not moved yet.
  await keys.migrate().catch((e) => output.appendLine(`[agentd] moving old API keys failed: ${e?.message ?? e}`));

  let chats: Chats | undefined;
  let view: ChatView | undefined;
  let permissions: Permissions | undefined;
  let programs: Programs | undefined;
  let mcpSignIn: McpSignIn | undefined;
  daemon = new Daemon(context, output, {
    onUpdate: (p) => { mcpSignIn?.onUpdate(p); chats?.route(p); programs?.onUpdate(p); },
    onPermission: (p, token) => permissions!.ask(p, token),
    onReady: (restarted) => void chats?.onDaemonReady(restarted, (c) => !!view?.onScreen(c)),
    onOpenPage: (uri) => mcpSignIn ? mcpSignIn.openPage(uri) : openPage(uri),
  }, keys);
  context.subscriptions.push(daemon);
  mcpSignIn = new McpSignIn(daemon);
  context.subscriptions.push(mcpSignIn);
  // What activation leaves for later (docs/benchmarks.md): loading the language client's bundle
  // once activate() has returned, and agentd answering initialize.
  const firstReady = daemon.onDidChangeState((s) => {
    if (s.status !== 'ready') return;
    firstReady.dispose();
    output.appendLine(`[agentd] after activation: language client loaded in ${ms(clientBundleLoad.ms ?? NaN)} ms, ${ms((clientBundleLoad.at ?? NaN) - t0)} ms after activate started; agentd ready ${ms(performance.now() - t0)} ms after activate started`);
  });
  context.subscriptions.push(firstReady);

  const diffs = new DiffContent();
  context.subscriptions.push(vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs));
  const review = new Review(diffs);
  context.subscriptions.push(review);
  chats = new Chats(daemon, review);
  context.subscriptions.push(chats);
  programs = new Programs(daemon, chats);
  context.subscriptions.push(programs);
  view = new ChatView(context.extensionUri, chats, diffs, review, context.workspaceState);
  registerInline(context, daemon);
  registerExplain(context, daemon);
  registerDictation(context, daemon);
  context.subscriptions.push(view, vscode.window.registerWebviewViewProvider(ChatView.id, view, { webviewOptions: { retainContextWhenHidden: true } }));
  // Editor-tab chats survive a window reload: VS Code gives their tabs back with the state their webview kept.
  context.subscriptions.push(vscode.window.registerWebviewPanelSerializer(ChatView.panelType, {
    deserializeWebviewPanel: async (panel, state) => view!.deserialize(panel, state),
  }));
  permissions = new Permissions(chats, (sessionId) => view!.shown(sessionId), (sessionId) => view!.revealSession(sessionId));
  view.permissions = permissions;
  // The chat the commands act on: the one in the chat view or editor tab last used.
  const chat = () => view!.active;
  daemon.onDidChangeState((s) => { if (s.status !== 'ready') permissions?.dropAll(); });

  // Status bar: ready / working / error; opens the chat.
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.name = 'agentd';
  status.command = 'agentd.openChat';
  const paint = () => {
    const d = daemon!.state;
    if (d.status === 'error' || d.status === 'stopped') {
      status.text = '$(error) agentd';
      status.tooltip = vscode.l10n.t('agentd: {0}', d.message ?? d.status);
      status.backgroundColor = new vscode.ThemeColor('statusBarItem.errorBackground');
    } else if (d.status === 'starting') {
      status.text = '$(loading~spin) agentd';
      status.tooltip = d.message ?? vscode.l10n.t('agentd is starting');
      status.backgroundColor = undefined;
    } else if (chats!.running) {
      status.text = `$(sync~spin) ${vscode.l10n.t('agentd: working')}`;
      status.tooltip = vscode.l10n.t('agentd is working; click to open the chat');
      status.backgroundColor = undefined;
    } else {
      status.text = '$(comment-discussion) agentd';
      status.tooltip = vscode.l10n.t('agentd is ready; click to open the chat');
      status.backgroundColor = undefined;
    }
  };
  paint();
  status.show();
  context.subscriptions.push(status, daemon.onDidChangeState(paint), chats.onDidChange(paint));

  const reg = (id: string, fn: (...a: any[]) => any) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  reg('agentd.openChat', () => view!.reveal(true));
  reg('agentd.mcpSignIn', (server?: unknown) => mcpSignIn!.signIn(typeof server === 'string' ? server : undefined));
  reg('agentd.openChatInEditor', () => view!.openInEditor());
  reg('agentd.switchChat', async () => {
    const pick = await vscode.window.showQuickPick(chats!.list(chat()).map((e) => ({
      label: e.title || vscode.l10n.t('agentd: New Chat'),
      description: e.waiting ? vscode.l10n.t('waiting for your answer') : e.running ? vscode.l10n.t('working') : undefined,
      id: e.id,
    })), { title: vscode.l10n.t('agentd: Switch Chat') });
    const target = pick && chats!.byId(pick.id);
    if (target) await view!.revealChat(target, true);
  });
  reg('agentd.sendPrompt', async (arg?: unknown) => {
    let text = typeof arg === 'string' ? arg : (arg && typeof arg === 'object' && typeof (arg as any).text === 'string') ? (arg as any).text : undefined;
    const extra: ContentBlock[] = [];
    const ed = vscode.window.activeTextEditor;
    if (ed && !ed.selection.isEmpty) {
      const sel = ed.selection;
      const uri = ed.document.uri.with({ fragment: `L${sel.start.line + 1}-${sel.end.line + 1}` }).toString();
      extra.push({ type: 'resource', resource: { uri, text: ed.document.getText(sel), mimeType: 'text/plain' } });
    }
    if (text === undefined) {
      text = await vscode.window.showInputBox({
        title: vscode.l10n.t('agentd: Send Prompt'),
        prompt: extra.length ? vscode.l10n.t('Ask agentd (the selection goes along)') : vscode.l10n.t('Ask agentd'),
        placeHolder: vscode.l10n.t('e.g. Explain this function'),
        ignoreFocusOut: true,
      });
    }
    if (!text || !text.trim()) return;
    const target = chat();
    await view!.revealChat(target, false);
    void target.prompt(text.trim(), extra);
  });
  reg('agentd.askAboutSelection', async () => {
    const ed = vscode.window.activeTextEditor;
    const chip = ed && (selectionChip(ed) ?? documentChip(ed.document));
    if (chip) await view!.attach(chip);
    else await view!.revealChat(chat(), true);
  });
  const answerLatest = (button: PermissionButton) => {
    const id = permissions?.latest();
    if (id) permissions!.answer(id, button);
    else void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no permission request is waiting.'));
  };
  reg('agentd.allowPermission', () => answerLatest('allow_once'));
  reg('agentd.denyPermission', () => answerLatest('deny'));
  reg('agentd.cancel', () => chat().cancel());
  reg('agentd.undo', async () => { const c = chat(); await view!.revealChat(c, false); await c.prompt('/undo'); });
  reg('agentd.fork', () => view!.fork());
  const mcpView = new McpView(async () => {
    const id = chat().state.sessionId;
    return id ? (await daemon!.request(ToDaemon.mcpServers, { sessionId: id })).servers : undefined;
  });
  context.subscriptions.push(mcpView, vscode.window.registerTreeDataProvider('agentd.mcp', mcpView));
  reg('agentd.mcp.refresh', () => mcpView.refresh());
  context.subscriptions.push(mcpSignIn!.onDidChange(() => void mcpView.refresh()));
  // The MCP view's "Sign in" and "Sign out" on a server's node (src/pure/mcplist.ts says which).
  const viewServer = (node?: unknown) => {
    const server = (node as McpNode | undefined)?.server, sessionId = chat().state.sessionId;
    return typeof server === 'string' && server !== '' && sessionId ? { server, sessionId } : undefined;
  };
  reg('agentd.mcp.signIn', (node?: unknown) => { const n = viewServer(node); return n ? mcpSignIn!.signIn(n.server, n.sessionId) : mcpSignIn!.signIn(); });
  reg('agentd.mcp.signOut', (node?: unknown) => { const n = viewServer(node); if (n) return mcpSignIn!.signOut(n.server, n.sessionId); });
  reg('agentd.restoreCheckpoint', (id?: unknown) => chat().restoreCheckpoint(typeof id === 'string' ? id : undefined));
  reg('agentd.newSession', async () => { await view!.newChat(); await view!.revealChat(chat(), true); });
  reg('agentd.setMode', async (arg?: unknown) => {
    let mode = typeof arg === 'string' ? arg : undefined;
    if (!mode) {
      const pick = await vscode.window.showQuickPick([
        { label: vscode.l10n.t('Ask'), description: vscode.l10n.t('ask before every change and program run'), mode: 'ask' },
        { label: vscode.l10n.t('Auto'), description: vscode.l10n.t('apply edits and run programs without asking'), mode: 'auto' },
        { label: vscode.l10n.t('Plan'), description: vscode.l10n.t('read and plan only, no changes'), mode: 'plan' },
      ], { title: vscode.l10n.t('agentd: Set Mode'), placeHolder: vscode.l10n.t('Current: {0}', chat().state.mode ?? 'ask') });
      mode = pick?.mode;
    }
    if (mode) await chat().setMode(mode);
  });
  // Only this command needs the provider walk-through: it comes with the language client's bundle.
  reg('agentd.configureProvider', async () => (await loadClientBundle()).configureProvider(keys, daemon!));
  reg('agentd.removeKey', () => removeKey(keys));
  reg('agentd.manageGrants', () => manageGrants(daemon!, chat().state.sessionId));
  reg('agentd.showLogs', () => output.show(true));
  reg('agentd.restart', () => daemon!.restart('requested by the user'));

  void daemon.start();
  output.appendLine(`[agentd] activation: bundle start to activate ${ms(bundleToActivate)} ms, activate call ${ms(activateCall)} ms, activate resolved ${ms(performance.now() - t0)} ms`);
  return { chatState: () => chat().state };
}

export async function deactivate() {
  await daemon?.dispose();
}
