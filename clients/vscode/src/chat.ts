// One chat: its agentd session, its view model, and the requests that drive it (new, prompt,
// steer, cancel, config options, checkpoints, fork, load). Several are open at once (chats.ts).
import * as vscode from 'vscode';
import * as os from 'os';
import * as path from 'path';
import { randomUUID } from 'crypto';
import { Daemon } from './daemon';
import { ContentBlock, ToDaemon, ToDaemonNote } from './pure/protocol';
import { requestError, turnError } from './pure/errors';
import { ChatState, Event, initialState, reduce, ConfigOption, turnBaselines } from './pure/viewmodel';
import { Review } from './review';
import { isBlank } from './pure/chatlist';
import type { McpResourceList } from './pure/mentions';

export class Chat implements vscode.Disposable {
  state: ChatState = initialState();
  private readonly eventEmitter = new vscode.EventEmitter<Event>();
  /** Every event applied to the state, in order (the webview replays them). */
  readonly onEvent = this.eventEmitter.event;
  private creating: Promise<string> | undefined;
  /** Called when a turn is cancelled, so pending permission requests answer `cancelled`. */
  onCancelled: (sessionId: string) => void = () => undefined;
  /** The editor-side review of the agent's edits (Keep / Undo per hunk). */
  review: Review | undefined;

  private readonly daemonSub: vscode.Disposable;
  /** A saved chat to load once agentd is up: the chat a window reload gives back. */
  private pendingLoad: { sessionId: string; title?: string } | undefined;
  /** The load of a saved chat under way (agentd does not know the session until it has answered). */
  private loading: Promise<void> | undefined;

  /** id: the chat's own name in the extension (it has no session yet at first); created: its place in the list. */
  /** The last `agent/x/mcp/servers` listing, for `@server:uri` mentions: kept a few seconds. */
  private mcpListing: { sessionId: string; at: number; servers: Promise<McpResourceList[] | undefined> } | undefined;

  constructor(private readonly daemon: Daemon, readonly id = 'chat', readonly created = 0) {
    this.state.daemon = { status: daemon.state.status, message: daemon.state.message };
    this.daemonSub = daemon.onDidChangeState((s) => this.dispatch({ type: 'daemon', status: s.status, message: s.message }));
  }

  dispatch(e: Event) {
    this.state = reduce(this.state, e);
    this.eventEmitter.fire(e);
  }

  cwd(): string {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
  }

  /**
   * agentd (re)started (after a crash, or a restart the user asked for): resume the session the
   * chat had, or open a fresh one (at once only for a chat on screen: `open`; others on their
   * next prompt).
   */
  async onDaemonReady(_restarted: boolean, open = true) {
    if (this.pendingLoad) {
      const p = this.pendingLoad;
      this.pendingLoad = undefined;
      await this.loadSession(p.sessionId, p.title);
      return;
    }
    // A blank chat has nothing to resume: it starts afresh, with agentd's new settings.
    const old = isBlank(this.state) ? undefined : this.state.sessionId;
    let lost = false;
    if (old) {
      try {
        const r = await this.daemon.request(ToDaemon.sessionResume, { sessionId: old, cwd: this.cwd(), mcpServers: [] });
        if (r?.configOptions) this.dispatch({ type: 'configOptions', configOptions: r.configOptions });
        this.dispatch({ type: 'notice', severity: 'warning', title: vscode.l10n.t('agentd restarted; the chat was resumed.') });
        return;
      } catch {
        lost = true;
      }
    }
    this.dispatch({ type: 'session', sessionId: undefined });
    if (!open && !lost) return;
    try {
      await this.ensureSession(true);
    } catch (e: any) {
      const u = requestError(e, 'start a chat');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
    }
    // After the new session's reset, so that the chat keeps saying what happened.
    if (lost) this.dispatch({ type: 'notice', severity: 'warning', title: vscode.l10n.t('agentd restarted; the previous chat could not be resumed, so a new one was started.') });
  }

  async ensureSession(reset = false): Promise<string> {
    // A saved chat given back after a window reload is this chat's session: a prompt sent before
    // agentd is up, or while that chat loads, goes on in it once agentd has loaded it. Sent at
    // once it would reach agentd before the load and be refused as an unknown session.
    if (this.pendingLoad) {
      await this.daemon.whenReady();
      // onDaemonReady starts the load as agentd becomes ready; should it not have yet, start it here.
      if (this.pendingLoad) {
        const p = this.pendingLoad;
        this.pendingLoad = undefined;
        void this.loadSession(p.sessionId, p.title);
      }
    }
    if (this.loading) await this.loading;
    if (this.state.sessionId) return this.state.sessionId;
    if (!this.creating) {
      this.creating = (async () => {
        const r = await this.daemon.request(ToDaemon.sessionNew, { cwd: this.cwd(), mcpServers: [] });
        const sessionId = String(r.sessionId);
        // A chat history entry was loaded into this chat meanwhile: it keeps that session.
        if (this.state.sessionId) { this.close(sessionId); return this.state.sessionId; }
        if (reset || !this.state.items.length) this.dispatch({ type: 'reset', sessionId, configOptions: r.configOptions ?? [] });
        else this.dispatch({ type: 'session', sessionId, configOptions: r.configOptions ?? [] });
        return sessionId;
      })().finally(() => { this.creating = undefined; });
    }
    return this.creating;
  }

  /** Sends a prompt; resolves when its turn ends (a queued prompt waits its turn in agentd). */
  /** The session's MCP servers with their resources (none before the session exists). */
  mcpResources(): Promise<McpResourceList[] | undefined> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return Promise.resolve(undefined);
    const now = Date.now();
    if (this.mcpListing?.sessionId !== sessionId || now - this.mcpListing.at > 5000) {
      const servers = this.daemon.request(ToDaemon.mcpServers, { sessionId }).then((r: any) => (Array.isArray(r?.servers) ? r.servers : undefined), () => undefined);
      this.mcpListing = { sessionId, at: now, servers };
    }
    return this.mcpListing.servers;
  }

  async prompt(text: string, extra: ContentBlock[] = []): Promise<void> {
    let sessionId: string;
    try {
      sessionId = await this.ensureSession();
    } catch (e: any) {
      const u = requestError(e, 'send the prompt');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0}', u.title));
      return;
    }
    const promptId = randomUUID();
    const shown = extra.length ? `${text}\n\n${extra.map((b) => `\`${labelOf(b)}\``).join(' ')}` : text;
    this.dispatch({ type: 'promptSent', promptId, text: shown });
    try {
      const r = await this.daemon.request(ToDaemon.sessionPrompt, { sessionId, prompt: [{ type: 'text', text }, ...extra] });
      const err = r?._meta?.['agentd/error'];
      const changes = r?._meta?.['agentd/changes'];
      const u = turnError(err);
      this.dispatch({ type: 'turnEnded', promptId, stopReason: r?.stopReason, error: u?.title, errorDetail: u?.detail, changes });
      if (Array.isArray(changes) && changes.length) this.review?.track(turnBaselines(this.state.items, promptId, changes, (p) => path.resolve(this.cwd(), p)));
      // A turn may add a checkpoint, and /undo marks one restored.
      void this.refreshCheckpoints();
    } catch (e: any) {
      const u = requestError(e, 'finish the turn');
      this.dispatch({ type: 'turnEnded', promptId, stopReason: 'error', error: u.title, errorDetail: u.detail });
    }
  }

  /**
   * Steers the running turn: agentd adds the message at its next step boundary and shows it as
   * a user message. With no turn running (it ended meanwhile) agentd answers `accepted:false`,
   * and the text goes as a normal prompt; so does it to an agentd without steering.
   */
  async steer(text: string): Promise<void> {
    const sessionId = this.state.sessionId;
    if (sessionId && this.state.running) {
      try {
        const r = await this.daemon.request(ToDaemon.sessionSteer, { sessionId, prompt: [{ type: 'text', text }] });
        if (r?.accepted) return;
      } catch (e: any) {
        this.daemon.output.appendLine(`[agentd] steer failed, sending a prompt instead: ${e?.message ?? e}`);
      }
    }
    await this.prompt(text);
  }

  /** Asks agentd for the session's checkpoints; they mark the user messages that can be restored. */
  async refreshCheckpoints() {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    try {
      const r = await this.daemon.request(ToDaemon.checkpointsList, { sessionId });
      if (this.state.sessionId === sessionId) this.dispatch({ type: 'checkpoints', checkpoints: r?.checkpoints ?? [] });
    } catch { /* an agentd without checkpoints: no markers */ }
  }

  /** Restore checkpoint: the files, the conversation (that turn and all after it) or both. */
  async restoreCheckpoint(checkpointId?: string) {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    if (!checkpointId) {
      const cp = await vscode.window.showQuickPick(this.state.checkpoints.map((c) => ({
        label: c.prompt || vscode.l10n.t('(no text)'), description: c.createdAt ? new Date(c.createdAt).toLocaleString() : '',
        detail: c.files.map((f) => path.basename(f.path)).join(', '), id: c.checkpointId,
      })), { title: vscode.l10n.t('agentd: Restore Checkpoint'), placeHolder: this.state.checkpoints.length ? vscode.l10n.t('The turn to go back to (before it ran)') : vscode.l10n.t('No checkpoints in this chat yet') });
      if (!cp) return;
      checkpointId = cp.id;
    }
    const cp = this.state.checkpoints.find((c) => c.checkpointId === checkpointId);
    const how = await vscode.window.showQuickPick([
      { label: vscode.l10n.t('Restore files and conversation'), restore: 'both' as const },
      { label: vscode.l10n.t('Restore files only'), restore: 'files' as const },
      { label: vscode.l10n.t('Restore conversation only'), restore: 'conversation' as const },
    ], { title: vscode.l10n.t('agentd: Restore Checkpoint'), placeHolder: vscode.l10n.t('Back to before "{0}"', cp?.prompt ?? checkpointId) });
    if (!how) return;
    // agentd refuses a restore while a turn runs: stop it and wait for its end.
    if (this.state.running) {
      this.cancel();
      await new Promise<void>((resolve) => {
        const done = () => { sub.dispose(); clearTimeout(timer); resolve(); };
        const sub = this.onEvent(() => { if (!this.state.running) done(); });
        const timer = setTimeout(done, 10000);
      });
    }
    let r: any;
    try {
      r = await this.daemon.request(ToDaemon.checkpointsRestore, { sessionId, checkpointId, restore: how.restore });
    } catch (e: any) {
      const u = requestError(e, 'restore the checkpoint');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
      return;
    }
    const files: any[] = Array.isArray(r?.files) ? r.files : [];
    const done = files.filter((f) => f?.restored === true).map((f) => String(f.path));
    const failed = files.filter((f) => f?.restored !== true);
    this.review?.forget(done);
    if (how.restore !== 'files') this.dispatch({ type: 'dropTurn', checkpointId });
    const title = how.restore === 'conversation' ? vscode.l10n.t('Conversation restored to before that prompt.')
      : how.restore === 'both'
        ? (done.length === 1 ? vscode.l10n.t('Restored 1 file from the checkpoint, and the conversation.') : vscode.l10n.t('Restored {0} files from the checkpoint, and the conversation.', done.length))
        : (done.length === 1 ? vscode.l10n.t('Restored 1 file from the checkpoint.') : vscode.l10n.t('Restored {0} files from the checkpoint.', done.length));
    this.dispatch({
      type: 'notice', severity: failed.length ? 'warning' : 'info', title,
      description: failed.length ? failed.map((f) => vscode.l10n.t('{0}: {1}', path.basename(String(f?.path)), f?.reason ?? vscode.l10n.t('not restored'))).join('\n') : undefined,
    });
    await this.refreshCheckpoints();
  }

  /**
   * Fork conversation: a new session holding a copy of this one's history, loaded into `into`
   * (a new chat); this one stays open as it is.
   */
  async fork(into: Chat): Promise<boolean> {
    const sessionId = this.state.sessionId;
    if (!sessionId) return false;
    let r: any;
    try {
      r = await this.daemon.request(ToDaemon.sessionFork, { sessionId });
    } catch (e: any) {
      const u = requestError(e, 'fork the conversation');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
      return false;
    }
    const title = this.state.title ? vscode.l10n.t('Fork of {0}', this.state.title) : vscode.l10n.t('Fork');
    await into.loadSession(String(r.sessionId), title);
    into.dispatch({ type: 'notice', severity: 'info', title: vscode.l10n.t('Forked: you are in a copy of the conversation; the original is in the chat history.') });
    return true;
  }

  cancel() {
    const sessionId = this.state.sessionId;
    if (!sessionId) return;
    if (this.state.running) this.daemon.notify(ToDaemonNote.sessionCancel, { sessionId });
    this.onCancelled(sessionId);
  }

  /** Frees agentd's resources for a session we leave; it stays in the history. */
  private close(sessionId: string | undefined) {
    if (!sessionId) return;
    void this.daemon.request(ToDaemon.sessionClose, { sessionId }).catch(() => undefined);
  }

  /** Gives the chat a session now (a chat on screen shows its mode and model), saying so when it cannot. */
  async start() {
    if (this.daemon.state.status !== 'ready') return; // onDaemonReady gives it one
    try {
      await this.ensureSession();
    } catch (e: any) {
      const u = requestError(e, 'start a chat');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
    }
  }

  /** The chat is closed: its turn stops and agentd frees the session (it stays in the history). */
  closeChat() {
    if (this.state.running) this.cancel();
    this.close(this.state.sessionId);
  }

  private optionId(category: 'mode' | 'model'): string {
    const o = this.state.configOptions.find((c: ConfigOption) => c.category === category || c.id === category);
    return o?.id ?? category;
  }

  async setConfig(configId: string, value: string) {
    try {
      const sessionId = await this.ensureSession();
      const r = await this.daemon.request(ToDaemon.sessionSetConfigOption, { sessionId, configId, value });
      if (Array.isArray(r?.configOptions)) this.dispatch({ type: 'configOptions', configOptions: r.configOptions });
    } catch (e: any) {
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: {0}', requestError(e, 'change the setting').title));
    }
  }

  setMode(mode: string) { return this.setConfig(this.optionId('mode'), mode); }

  async listSessions(): Promise<any[]> {
    const r = await this.daemon.request(ToDaemon.sessionList, { cwd: this.cwd() });
    return Array.isArray(r?.sessions) ? r.sessions : [];
  }

  /** A saved chat waits to be loaded (restore). */
  get restoring(): boolean { return !!this.pendingLoad; }

  /** Shows a saved chat again after a window reload: loaded now, or once agentd is up. */
  restore(sessionId: string, title?: string) {
    if (this.daemon.state.status === 'ready') void this.loadSession(sessionId, title);
    else this.pendingLoad = { sessionId, title };
  }

  /** Deletes a saved chat from agentd's history (agentd refuses an unknown id). */
  async deleteSession(sessionId: string) {
    await this.daemon.request(ToDaemon.sessionDelete, { sessionId });
  }

  /** Shows a saved chat: agentd replays it into this chat, which goes on in its session. */
  loadSession(sessionId: string, title?: string): Promise<void> {
    const run = this.load(sessionId, title);
    this.loading = run;
    void run.finally(() => { if (this.loading === run) this.loading = undefined; });
    return run;
  }

  private async load(sessionId: string, title?: string) {
    if (this.state.running) this.cancel();
    if (this.state.sessionId !== sessionId) this.close(this.state.sessionId);
    this.dispatch({ type: 'reset', sessionId, title });
    try {
      const r = await this.daemon.request(ToDaemon.sessionLoad, { sessionId, cwd: this.cwd(), mcpServers: [] });
      this.dispatch({ type: 'configOptions', configOptions: r?.configOptions ?? [] });
      void this.refreshCheckpoints();
    } catch (e: any) {
      const u = requestError(e, 'load the chat');
      this.dispatch({ type: 'notice', severity: 'error', title: u.title, description: u.detail });
      // agentd does not have that session (its transcript is gone): the chat goes on in a new
      // one, so that a prompt sent meanwhile, or the next, is answered instead of refused.
      if (this.state.sessionId === sessionId) this.dispatch({ type: 'session', sessionId: undefined });
    }
  }

  dispose() { this.daemonSub.dispose(); this.eventEmitter.dispose(); }
}

function labelOf(block: any): string {
  const server = block?._meta?.['agentd/mcpServer'];
  if (typeof server === 'string') return `${server}:${String(block?.uri ?? '')}`.replace(/`/g, "'");
  const uri = String(block?.resource?.uri ?? block?.uri ?? '');
  const m = /([^/]+)$/.exec(uri.split('#')[0]);
  const frag = uri.includes('#') ? `#${uri.split('#')[1]}` : '';
  let name = m?.[1];
  try { if (name) name = decodeURIComponent(name); } catch { /* a malformed escape: shown as it is */ }
  return name ? `${name}${frag}` : 'attachment';
}
