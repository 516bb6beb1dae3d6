// The chat session controller: one current agentd session per window, its view model, and
// the requests that drive it (new, prompt, cancel, config options, list, load).
import * as vscode from 'vscode';
import * as os from 'os';
import { randomUUID } from 'crypto';
import { Daemon } from './daemon';
import { ContentBlock, ToDaemon, ToDaemonNote } from './pure/protocol';
import { ChatState, Event, initialState, reduce, ConfigOption } from './pure/viewmodel';

export class Chat implements vscode.Disposable {
  state: ChatState = initialState();
  private readonly eventEmitter = new vscode.EventEmitter<Event>();
  /** Every event applied to the state, in order (the webview replays them). */
  readonly onEvent = this.eventEmitter.event;
  private creating: Promise<string> | undefined;
  /** Called when a turn is cancelled, so pending permission requests answer `cancelled`. */
  onCancelled: (sessionId: string) => void = () => undefined;

  constructor(private readonly daemon: Daemon) {
    daemon.onDidChangeState((s) => this.dispatch({ type: 'daemon', status: s.status, message: s.message }));
  }

  dispatch(e: Event) {
    this.state = reduce(this.state, e);
    this.eventEmitter.fire(e);
  }

  cwd(): string {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
  }

  /** agentd (re)started: resume the session we had, or open a fresh one. */
  async onDaemonReady(restarted: boolean) {
    const old = this.state.sessionId;
    if (old && restarted) {
      try {
        const r = await this.daemon.request(ToDaemon.sessionResume, { sessionId: old, cwd: this.cwd(), mcpServers: [] });
        if (r?.configOptions) this.dispatch({ type: 'configOptions', configOptions: r.configOptions });
        this.dispatch({ type: 'notice', severity: 'warning', title: 'agentd restarted; the chat was resumed.' });
        return;
      } catch {
        this.dispatch({ type: 'notice', severity: 'warning', title: 'agentd restarted; the previous chat could not be resumed, so a new one was started.' });
      }
    }
    this.dispatch({ type: 'session', sessionId: undefined });
    try {
      await this.ensureSession(true);
    } catch (e: any) {
      this.dispatch({ type: 'notice', severity: 'error', title: `Could not start a chat: ${e?.message ?? e}` });
    }
  }

  async ensureSession(reset = false): Promise<string> {
    if (this.state.sessionId) return this.state.sessionId;
    if (!this.creating) {
      this.creating = (async () => {
        const r = await this.daemon.request(ToDaemon.sessionNew, { cwd: this.cwd(), mcpServers: [] });
        const sessionId = String(r.sessionId);
        if (reset || !this.state.items.length) this.dispatch({ type: 'reset', sessionId, configOptions: r.configOptions ?? [] });
        else this.dispatch({ type: 'session', sessionId, configOptions: r.configOptions ?? [] });
        return sessionId;
      })().finally(() => { this.creating = undefined; });
    }
    return this.creating;
  }

  /** Sends a prompt; resolves when its turn ends (a queued prompt waits its turn in agentd). */
  async prompt(text: string, extra: ContentBlock[] = []): Promise<void> {
    let sessionId: string;
    try {
      sessionId = await this.ensureSession();
    } catch (e: any) {
      this.dispatch({ type: 'notice', severity: 'error', title: `Could not send the prompt: ${e?.message ?? e}` });
      void vscode.window.showErrorMessage(`agentd: ${e?.message ?? e}`);
      return;
    }
    const promptId = randomUUID();
    const shown = extra.length ? `${text}\n\n${extra.map((b) => `\`${labelOf(b)}\``).join(' ')}` : text;
    this.dispatch({ type: 'promptSent', promptId, text: shown });
    try {
      const r = await this.daemon.request(ToDaemon.sessionPrompt, { sessionId, prompt: [{ type: 'text', text }, ...extra] });
      const err = r?._meta?.['agentd/error'];
      this.dispatch({ type: 'turnEnded', promptId, stopReason: r?.stopReason, error: err ? `${err.message ?? err.kind}` : undefined, changes: r?._meta?.['agentd/changes'] });
    } catch (e: any) {
      this.dispatch({ type: 'turnEnded', promptId, stopReason: 'error', error: `agentd: ${e?.message ?? e}` });
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

  async newChat() {
    const old = this.state.sessionId;
    if (old && this.state.running) this.cancel();
    this.close(old);
    this.dispatch({ type: 'reset' });
    try {
      await this.ensureSession(true);
    } catch (e: any) {
      this.dispatch({ type: 'notice', severity: 'error', title: `Could not start a chat: ${e?.message ?? e}` });
    }
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
      void vscode.window.showErrorMessage(`agentd: could not set ${configId}: ${e?.message ?? e}`);
    }
  }

  setMode(mode: string) { return this.setConfig(this.optionId('mode'), mode); }

  async listSessions(): Promise<any[]> {
    const r = await this.daemon.request(ToDaemon.sessionList, { cwd: this.cwd() });
    return Array.isArray(r?.sessions) ? r.sessions : [];
  }

  async loadSession(sessionId: string, title?: string) {
    if (this.state.running) this.cancel();
    if (this.state.sessionId !== sessionId) this.close(this.state.sessionId);
    this.dispatch({ type: 'reset', sessionId, title });
    try {
      const r = await this.daemon.request(ToDaemon.sessionLoad, { sessionId, cwd: this.cwd(), mcpServers: [] });
      this.dispatch({ type: 'configOptions', configOptions: r?.configOptions ?? [] });
    } catch (e: any) {
      this.dispatch({ type: 'notice', severity: 'error', title: `Could not load the chat: ${e?.message ?? e}` });
    }
  }

  dispose() { this.eventEmitter.dispose(); }
}

function labelOf(block: any): string {
  const uri = String(block?.resource?.uri ?? block?.uri ?? '');
  const m = /([^/]+)$/.exec(uri.split('#')[0]);
  const frag = uri.includes('#') ? `#${uri.split('#')[1]}` : '';
  return m ? `${decodeURIComponent(m[1])}${frag}` : 'attachment';
}
