// The chat's webviews: the side bar's view and any number of editor tabs ("Open chat in editor"),
// each showing one of the open chats (chats.ts) and able to switch between them. The host posts
// the shown chat's state once (snapshot) and then its events; the webview reduces them with the
// same reducer. A chat keeps running while no webview shows it.
import * as vscode from 'vscode';
import * as path from 'path';
import { randomBytes } from 'crypto';
import { Chat } from './chat';
import { Chats } from './chats';
import { requestError } from './pure/errors';
import { ComposerContext } from './context';
import { Chip, fileChip, mcpMentions } from './pure/mentions';
import { DROP_MAX, IMAGE_MAX, imageType, validImageBlock } from './pure/drop';
import { ContentBlock } from './pure/protocol';
import { DiffContent } from './diff';
import { Permissions } from './permissions';
import { PermissionButton } from './pure/viewmodel';
import { chatTitle, isBlank } from './pure/chatlist';
import { Review } from './review';
import { bundleScript } from './pure/l10n';

/** workspaceState: the names the user gave saved chats, by session id. */
const NAMES = 'agentd.chatNames';
/** workspaceState: the session the side bar's chat shows, given back after a window reload. */
const SIDEBAR = 'agentd.sidebarChat';

/** The webview page, the same in the side bar and in an editor tab. */
function pageHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const dist = vscode.Uri.joinPath(extensionUri, 'dist');
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="${vscode.env.language}"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style}">
<title>agentd</title></head>
<body><div id="app"></div>
${bundleScript(vscode.l10n.bundle)}
<script nonce="${nonce}" src="${script}"></script></body></html>`;
}

/** One webview (the side bar's, or an editor tab's) and the chat it shows. */
class Surface implements vscode.Disposable {
  private ready = false;
  /** The input is to take the focus once the webview is ready (a command ran before it loaded). */
  private focusWhenReady = false;
  private sub: vscode.Disposable | undefined;
  private listSent = '';
  private readonly disposables: vscode.Disposable[] = [];
  private readonly context = new ComposerContext((m) => this.post(m));

  constructor(
    readonly webview: vscode.Webview,
    readonly panel: vscode.WebviewPanel | undefined,
    public chat: Chat,
    private readonly views: ChatView,
    readonly isVisible: () => boolean,
  ) {
    webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(views.extensionUri, 'dist')] };
    webview.html = pageHtml(webview, views.extensionUri);
    this.disposables.push(webview.onDidReceiveMessage((m) => this.onMessage(m).catch((e) => {
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0}', requestError(e, 'do that').title));
    })));
    this.bind();
  }

  private bind() {
    this.sub?.dispose();
    this.sub = this.chat.onEvent((event) => {
      this.queueEvent(event);
      // A turn's Changes list arrives with its end: say at once which of its files are under review.
      if ((event as any)?.type === 'turnEnded') this.sendReview();
    });
    this.paintTitle();
  }

  /**
   * For each Changes list of the chat shown, the files still under review (Keep / Undo in the
   * editor): once none is, the list says so instead of offering Keep All / Undo All for nothing.
   */
  sendReview() {
    const open: Record<string, string[]> = {};
    for (const it of this.chat.state.items) {
      if (it.kind !== 'changes') continue;
      open[it.id] = it.files.filter((f) => this.views.review.has(path.resolve(this.chat.cwd(), f.path))).map((f) => f.path);
    }
    this.post({ type: 'review', open });
  }

  /**
   * Files dropped on the chat (issue 33 item 8), as the webview read them from the drop's URI
   * list: each local file becomes a chip (an image file an image block, anything else a resource
   * link agentd reads when the prompt runs); folders, other schemes and missing files are refused
   * with one message.
   */
  private async drop(uris: unknown) {
    const list = Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string').slice(0, DROP_MAX) : [];
    const refused: string[] = [];
    for (const u of list) {
      let uri: vscode.Uri;
      try { uri = vscode.Uri.parse(u, true); } catch { refused.push(u); continue; }
      if (uri.scheme !== 'file') { refused.push(u); continue; }
      let st: vscode.FileStat;
      try { st = await vscode.workspace.fs.stat(uri); } catch { refused.push(uri.fsPath); continue; }
      if (st.type & vscode.FileType.Directory) { refused.push(uri.fsPath); continue; }
      const name = vscode.workspace.asRelativePath(uri, false);
      const mimeType = imageType(uri.path);
      if (mimeType) {
        if (st.size > IMAGE_MAX) { refused.push(uri.fsPath); continue; }
        const data = Buffer.from(await vscode.workspace.fs.readFile(uri)).toString('base64');
        this.post({ type: 'attach', chip: { id: uri.toString(), label: name, kind: 'image', block: { type: 'image', mimeType, data } } });
      } else this.post({ type: 'attach', chip: fileChip(uri.toString(), name) });
    }
    if (refused.length) void vscode.window.showWarningMessage(vscode.l10n.t('agentd: only files (images up to 5 MB) can be dropped on the chat; left out: {0}', refused.join(', ')));
  }

  /** The chat history (agentd's saved sessions, with the names the user gave them) for the webview. */
  async sendSessions() {
    let sessions: any[] = [];
    let error: string | undefined;
    try { sessions = await this.chat.listSessions(); } catch (e: any) { error = requestError(e, 'list the chats').title; }
    this.post({ type: 'sessions', sessions, names: this.views.names(), error });
  }

  /** Shows another chat here; the one shown before goes on in the background. */
  show(chat: Chat) {
    if (chat === this.chat) return;
    this.chat = chat;
    this.bind();
    this.post({ type: 'snapshot', state: chat.state, chatId: chat.id });
    this.sendReview();
    this.sendList();
  }

  /** The chat list, when it changed for this webview. */
  sendList() {
    this.paintTitle();
    const chats = this.views.chats.list(this.chat);
    const json = JSON.stringify(chats);
    if (!this.ready || json === this.listSent) return;
    this.listSent = json;
    this.post({ type: 'chats', chats });
  }

  private paintTitle() {
    if (this.panel) this.panel.title = chatTitle(this.chat.state) || vscode.l10n.t('agentd: New Chat');
  }

  /** A message to the webview, dropped when it is not there; the events queued before it go first. */
  post(m: unknown) {
    this.flushEvents();
    if (this.ready) void this.webview.postMessage(m);
  }

  /**
   * The chat's events go to the webview in batches, one message per turn of the event loop: a
   * reply streams as hundreds of chunks, and each message costs the workbench a copy and a relay
   * into the webview's frame on the page's one thread, which fell behind by a hundred chunks at
   * a stream's end (issue 33 item 3).
   */
  private pendingEvents: unknown[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private queueEvent(event: unknown) {
    if (!this.ready) return;
    this.pendingEvents.push(event);
    this.flushTimer ??= setTimeout(() => this.flushEvents(), 0);
  }
  private flushEvents() {
    if (this.flushTimer) { clearTimeout(this.flushTimer); this.flushTimer = undefined; }
    if (!this.pendingEvents.length) return;
    const events = this.pendingEvents;
    this.pendingEvents = [];
    if (this.ready) void this.webview.postMessage({ type: 'events', events });
  }

  /**
   * Gives the chat input the focus: at once, or as soon as the webview has loaded (the first
   * Ctrl+Alt+A after a window load creates the view, which is not ready when the command asks).
   */
  focusInput() {
    if (this.ready) this.post({ type: 'focusInput' });
    else this.focusWhenReady = true;
  }

  async whenReady() {
    // A freshly created webview is ready only after its script ran.
    for (let i = 0; i < 50 && !this.ready; i++) await new Promise((r) => setTimeout(r, 100));
  }

  private async onMessage(m: any) {
    if (m?.type !== 'ready') this.views.activate(this);
    switch (m?.type) {
      case 'ready':
        this.ready = true;
        this.listSent = '';
        // A reloaded webview: the snapshot holds what the events still queued would say.
        this.pendingEvents = [];
        await this.webview.postMessage({ type: 'snapshot', state: this.chat.state, chatId: this.chat.id });
        this.sendReview();
        this.sendList();
        this.context.send();
        if (this.focusWhenReady) { this.focusWhenReady = false; this.post({ type: 'focusInput' }); }
        return;
      case 'focus':
        return;
      case 'switchChat': {
        const chat = this.views.chats.byId(m.chatId);
        if (chat) this.views.display(this, chat);
        return;
      }
      case 'closeChat': {
        const chat = this.views.chats.byId(m.chatId);
        if (chat) this.views.closeChat(chat);
        return;
      }
      case 'openInEditor':
        await this.views.openInEditor(this.chat);
        return;
      case 'prompt':
        if (typeof m.text === 'string' && m.text.trim()) await this.chat.prompt(m.text.trim(), contextBlocks(m.context));
        return;
      case 'drop':
        await this.drop(m.uris);
        return;
      case 'mentionQuery': {
        const query = String(m.query ?? ''), sigil = String(m.sigil ?? '@');
        // `@` also offers the session's MCP resources (`@server:uri`), first when the query names a server.
        const [files, resources] = await Promise.all([
          this.context.mentions(query, sigil).catch(() => []),
          sigil === '@' ? this.chat.mcpResources().then((s) => mcpMentions(s, query)).catch(() => []) : [],
        ]);
        const items = (query.includes(':') ? [...resources, ...files] : [...files, ...resources]).slice(0, 30);
        this.post({ type: 'mentions', token: m.token, items });
        return;
      }
      case 'cancel':
        this.chat.cancel();
        return;
      case 'newChat':
        await this.views.newChat(this);
        return;
      case 'setConfig':
        await this.chat.setConfig(String(m.configId), String(m.value));
        return;
      case 'permissionShown':
        this.views.permissions?.shownInView(String(m.requestId), m.visible === true);
        return;
      case 'code':
        if (typeof m.code === 'string' && (m.action === 'insert' || m.action === 'apply')) await insertCode(m.code, m.action);
        return;
      case 'permission':
        this.views.permissions?.answer(String(m.requestId), m.button as PermissionButton);
        return;
      case 'denyWithFeedback':
        await this.views.permissions?.denyWithFeedback(String(m.requestId));
        return;
      case 'steer':
        if (typeof m.text === 'string' && m.text.trim()) await this.chat.steer(m.text.trim());
        return;
      case 'openDiff': {
        const it: any = this.chat.state.items[m.index];
        const d = it?.diffs?.[m.diff ?? 0];
        if (d) await this.views.diffs.open(d.path, d.oldText, d.newText);
        return;
      }
      case 'openChange': {
        // The file against its text before the turn while it is under review; else the file itself.
        const p = String(m.path ?? '');
        if (p && !(await this.views.review.openDiff(p))) await vscode.window.showTextDocument(vscode.Uri.file(p), { preview: true });
        return;
      }
      case 'stopProgram':
        await vscode.commands.executeCommand('agentd.stopProgram', { sessionId: this.chat.state.sessionId, programId: String(m.programId ?? '') });
        return;
      case 'restoreCheckpoint':
        await this.chat.restoreCheckpoint(typeof m.checkpointId === 'string' ? m.checkpointId : undefined);
        return;
      case 'openFile':
        if (typeof m.path === 'string') await vscode.window.showTextDocument(vscode.Uri.file(m.path), { preview: true });
        return;
      case 'listSessions':
        await this.sendSessions();
        return;
      case 'renameSession': {
        const id = String(m.sessionId ?? '');
        if (!id) return;
        const title = await vscode.window.showInputBox({
          title: vscode.l10n.t('agentd: Rename Chat'), value: typeof m.title === 'string' ? m.title : '',
          prompt: vscode.l10n.t('The name the chat history shows (empty: the name agentd gave it)'),
        });
        if (title === undefined) return;
        await this.views.rename(id, title.replace(/\s+/g, ' ').trim());
        await this.sendSessions();
        return;
      }
      case 'deleteSession': {
        const id = String(m.sessionId ?? '');
        if (!id) return;
        const del = vscode.l10n.t('Delete');
        const ok = await vscode.window.showWarningMessage(vscode.l10n.t('Delete the chat "{0}" from the history? This cannot be undone.', String(m.title || id)), { modal: true }, del);
        if (ok !== del) return;
        try {
          await this.views.deleteSession(this.chat, id);
        } catch (e: any) {
          void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0}', requestError(e, 'delete the chat').title));
        }
        await this.sendSessions();
        return;
      }
      case 'loadSession':
        await this.views.loadSession(this, String(m.sessionId), m.title);
        return;
      case 'command':
        if (['agentd.configureProvider', 'agentd.showLogs', 'agentd.restart', 'agentd.keepAll', 'agentd.undoAll', 'agentd.fork'].includes(m.command)) {
          await vscode.commands.executeCommand(m.command);
        }
        return;
    }
  }

  dispose() {
    this.sub?.dispose();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.context.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

/**
 * The side bar's chat view (a webview view in agentd's view container) and the chats opened in
 * editor tabs. Commands act on the active chat: the one in the webview last used.
 */
export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'agentd.chat';
  static readonly panelType = 'agentd.chatEditor';
  private view: vscode.WebviewView | undefined;
  private sidebar: Surface | undefined;
  /** The chat the side bar shows (also before its view exists). */
  private sidebarChat: Chat;
  private readonly panels = new Set<Surface>();
  private activeSurface: Surface | undefined;
  /** The side bar's input is to take the focus once its view exists. */
  private focusSidebar = false;
  private readonly disposables: vscode.Disposable[] = [];
  permissions: Permissions | undefined;

  constructor(
    readonly extensionUri: vscode.Uri,
    readonly chats: Chats,
    readonly diffs: DiffContent,
    readonly review: Review,
    private readonly memento: vscode.Memento,
  ) {
    this.sidebarChat = chats.create();
    // The side bar's chat of the last window comes back (editor tabs come back through their serializer).
    const saved = memento.get<{ sessionId?: unknown; title?: unknown }>(SIDEBAR);
    if (saved && typeof saved.sessionId === 'string') this.sidebarChat.restore(saved.sessionId, typeof saved.title === 'string' ? saved.title : undefined);
    this.disposables.push(chats.onDidChange(() => { for (const s of this.surfaces()) s.sendList(); this.saveSidebar(); }));
    this.disposables.push(review.onDidChangeFiles(() => { for (const s of this.surfaces()) s.sendReview(); }));
  }

  private surfaces(): Surface[] {
    return [...(this.sidebar ? [this.sidebar] : []), ...this.panels];
  }

  /** The chat commands act on: the one shown in the webview last used (the side bar's at first). */
  get active(): Chat {
    return this.activeSurface?.chat ?? this.sidebar?.chat ?? this.sidebarChat;
  }

  activate(s: Surface) { this.activeSurface = s; }

  /** Whether the chat holding `sessionId` is on screen (in a visible view or tab). */
  shown(sessionId: string): boolean {
    return this.surfaces().some((s) => s.chat.state.sessionId === sessionId && s.isVisible());
  }

  /** Whether a webview shows the chat, visible or not (such a chat is given a session at once). */
  onScreen(chat: Chat): boolean {
    return chat === this.sidebarChat || this.surfaces().some((s) => s.chat === chat);
  }

  get visible(): boolean {
    return !!this.view && this.view.visible;
  }

  /** Adds a chip (a selection, a file) to the active chat's input and focuses it. */
  async attach(chip: Chip) {
    const s = await this.revealChat(this.active, false);
    await s?.whenReady();
    s?.post({ type: 'attach', chip });
    s?.focusInput();
  }

  /** Shows the side bar's chat view. */
  async reveal(focusInput = false) {
    // The view may be resolved only after the command returns: then resolveWebviewView focuses it.
    if (focusInput) this.focusSidebar = true;
    await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    if (focusInput && this.sidebar) { this.focusSidebar = false; this.sidebar.focusInput(); }
  }

  /** Brings a chat into sight: its editor tab if it has one, else the side bar, switched to it. */
  async revealChat(chat: Chat, focusInput = false): Promise<Surface | undefined> {
    const panel = [...this.panels].find((s) => s.chat === chat);
    if (panel) {
      panel.panel!.reveal(undefined, false);
      this.activeSurface = panel;
      if (focusInput) panel.focusInput();
      return panel;
    }
    this.showInSidebar(chat);
    await this.reveal(focusInput);
    if (this.sidebar) this.activeSurface = this.sidebar;
    return this.sidebar;
  }

  /** The notification of a hidden chat's permission request opens that chat. */
  async revealSession(sessionId: string) {
    const chat = this.chats.bySession(sessionId);
    if (chat) await this.revealChat(chat);
  }

  private showInSidebar(chat: Chat) {
    this.sidebarChat = chat;
    this.sidebar?.show(chat);
    this.saveSidebar();
  }

  /** Keeps the side bar chat's session (only its id and title) for the next window. */
  private saveSidebar() {
    const c = this.sidebarChat;
    if (c.restoring) return;
    const v = c.state.sessionId && !isBlank(c.state) ? { sessionId: c.state.sessionId, title: chatTitle(c.state) } : undefined;
    const old = this.memento.get<{ sessionId?: string }>(SIDEBAR);
    if (old?.sessionId !== v?.sessionId || (old as any)?.title !== v?.title) void this.memento.update(SIDEBAR, v);
  }

  /** An editor-tab chat of the last window, given back by VS Code (its webview kept the session id). */
  deserialize(panel: vscode.WebviewPanel, state: unknown) {
    const st = state && typeof state === 'object' ? state as { sessionId?: unknown; title?: unknown } : {};
    const chat = this.chats.create();
    this.adopt(panel, chat);
    if (typeof st.sessionId === 'string') chat.restore(st.sessionId, typeof st.title === 'string' ? st.title : undefined);
    else void chat.start();
  }

  /** Shows a chat in a webview: an editor tab's (`where.panel`), else the side bar's. */
  display(where: Surface | undefined, chat: Chat) {
    if (where?.panel) where.show(chat);
    else this.showInSidebar(chat);
  }

  /** A blank chat for the webview `where` (the side bar's when it has no panel): one not on screen elsewhere, or a new one. */
  private blankChat(where: Surface | undefined): Chat {
    const elsewhere = (c: Chat) => [...this.panels].some((s) => s !== where && s.chat === c) || (!!where?.panel && c === this.sidebarChat);
    const blank = [...this.chats.all].reverse().find((c) => isBlank(c.state) && !elsewhere(c));
    return blank ?? this.chats.create();
  }

  /** New Chat: a fresh chat in that webview (the active one's by default); the one it showed goes on. */
  async newChat(where: Surface | undefined = this.activeSurface) {
    const chat = this.blankChat(where);
    this.display(where, chat);
    this.activeSurface = where?.panel ? where : this.sidebar;
    await chat.start();
  }

  /** A chat from the history: switched to when it is open, else loaded into a blank or new chat. */
  async loadSession(where: Surface, sessionId: string, title?: string) {
    const open = this.chats.bySession(sessionId);
    if (open) { this.display(where, open); return; }
    const chat = isBlank(where.chat.state) && !where.chat.state.running ? where.chat : this.chats.create();
    this.display(where, chat);
    await chat.loadSession(sessionId, title);
  }

  /** The names the user gave saved chats, by session id (workspaceState: only this view state is kept). */
  names(): Record<string, string> {
    const v = this.memento.get<unknown>(NAMES);
    return v && typeof v === 'object' ? Object.fromEntries(Object.entries(v as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string')) : {};
  }

  /** Renames a saved chat ('' gives it agentd's name back); an open chat with it takes the name at once. */
  async rename(sessionId: string, title: string) {
    const names = this.names();
    if (title) names[sessionId] = title; else delete names[sessionId];
    await this.memento.update(NAMES, names);
    const open = this.chats.bySession(sessionId);
    if (open && title) open.dispatch({ type: 'update', sessionId, update: { sessionUpdate: 'session_info_update', title } });
  }

  /** Deletes a saved chat: closed first when it is open (its turn stops), then gone from agentd's history. */
  async deleteSession(via: Chat, sessionId: string) {
    const open = this.chats.bySession(sessionId);
    if (open) this.closeChat(open);
    await via.deleteSession(sessionId);
    const names = this.names();
    if (sessionId in names) { delete names[sessionId]; await this.memento.update(NAMES, names); }
  }

  /** Fork: the copy opens as a new chat where the original was shown; the original stays open. */
  async fork(chat: Chat = this.active) {
    const copy = this.chats.create();
    if (!(await chat.fork(copy))) { this.chats.close(copy); return; }
    this.display([...this.panels].find((s) => s.chat === chat), copy);
    await this.revealChat(copy);
  }

  /** Closes a chat (its turn stops); the webviews that showed it show another. */
  closeChat(chat: Chat) {
    const showing = this.surfaces().filter((s) => s.chat === chat);
    const wasSidebar = this.sidebarChat === chat;
    this.chats.close(chat);
    const rest = [...this.chats.all].sort((a, b) => b.created - a.created);
    for (const s of showing) if (s.panel) s.panel.dispose();
    if (!wasSidebar) return;
    const next = rest.find((c) => !this.onScreen(c)) ?? this.chats.create();
    this.showInSidebar(next);
    void next.start();
  }

  /**
   * Open chat in editor (agentd: Move Chat to Editor): the chat moves to an editor tab (one
   * already there comes to the front), so two chats can be seen side by side; the side bar goes
   * on with a blank chat.
   */
  async openInEditor(chat: Chat = this.active) {
    const there = [...this.panels].find((s) => s.chat === chat);
    if (there) { there.panel!.reveal(); this.activeSurface = there; return; }
    const panel = vscode.window.createWebviewPanel(ChatView.panelType, chatTitle(chat.state) || vscode.l10n.t('agentd: New Chat'),
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false }, { enableScripts: true, retainContextWhenHidden: true });
    this.adopt(panel, chat);
    if (chat === this.sidebarChat) {
      const blank = this.blankChat(undefined);
      this.showInSidebar(blank);
      void blank.start();
    }
    void chat.start();
  }

  /** An editor tab becomes a chat's webview. */
  private adopt(panel: vscode.WebviewPanel, chat: Chat) {
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'agentd.svg');
    const s = new Surface(panel.webview, panel, chat, this, () => panel.visible);
    this.panels.add(s);
    this.activeSurface = s;
    panel.onDidChangeViewState(() => { if (panel.active) this.activeSurface = s; });
    panel.onDidDispose(() => {
      this.panels.delete(s);
      if (this.activeSurface === s) this.activeSurface = undefined;
      s.dispose();
    });
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.sidebar?.dispose();
    this.view = view;
    const s = new Surface(view.webview, undefined, this.sidebarChat, this, () => !!this.view && this.view.visible);
    this.sidebar = s;
    if (this.focusSidebar) { this.focusSidebar = false; s.focusInput(); }
    view.onDidDispose(() => {
      if (this.view !== view) return;
      this.view = undefined;
      if (this.activeSurface === s) this.activeSurface = undefined;
      this.sidebar = undefined;
      s.dispose();
    });
  }

  dispose() {
    for (const s of this.surfaces()) { s.panel?.dispose(); s.dispose(); }
    this.disposables.forEach((d) => d.dispose());
  }
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
  return v.filter((b: any) => validImageBlock(b) || (b?.type === 'resource_link' && typeof b.uri === 'string')
    || (b?.type === 'resource' && typeof b.resource?.uri === 'string' && typeof b.resource?.text === 'string'));
}
