// Starting agentd with vscode-languageclient over stdio, re-sending settings on change,
// restarting it a few times when it crashes, and routing its reverse requests. The language
// client itself is loaded only once activation has returned (./languageClient); until agentd is
// first ready, requests wait for it.
import * as vscode from 'vscode';
import { elicit } from './elicit';
import * as fs from 'fs';
import * as os from 'os';
import type { LanguageClient, LanguageClientOptions, ServerOptions } from 'vscode-languageclient/node';
import { isWebURL } from './pure/mcpSignIn';
import type * as LanguageClientBundle from './languageClient';
import { bundledPath, findAgentd } from './pure/binary';
import { didChangeConfigurationParams, effectiveSettings, initializationOptions, Settings, userMode, userValue } from './pure/settings';
import { ReadyGate } from './pure/ready';
import { Keys } from './keys';
import {
  ClientNotification, ClientNotifications, ClientRequest, ClientRequests, DaemonRequest, DaemonRequests,
  PermissionParams, PermissionResult, SessionUpdateParams,
  FromDaemon, FromDaemonNote, ToDaemonNote,
} from './pure/protocol';

/**
 * Passes on a showDocument that opens a web page in the browser (to the hooks' openPage when
 * there is one, which opens it as it is); refuses any other.
 */
async function showSignInPage(params: { uri: string; external?: boolean }, next: (p: any, token: any) => Promise<{ success: boolean }>, open?: (uri: string) => Promise<boolean>, token?: any): Promise<{ success: boolean }> {
  if (!params.external || !isWebURL(params.uri)) return { success: false };
  if (open) return { success: await open(params.uri) };
  return next(params, token);
}

/** A read error caused by what agentd wrote (bad framing or JSON), not by a dead pipe. */
function isProtocolError(err: any): boolean {
  if (!err) return false;
  if (err.name === 'SyntaxError' || err instanceof SyntaxError) return true;
  return /content-length|header|not valid json|unexpected token|jsonrpc/i.test(String(err.message ?? err));
}

export type DaemonState = { status: 'starting' | 'ready' | 'stopped' | 'error'; message?: string };

/** When the language client's bundle was required, and how long that took (performance.now() ms). */
export const clientBundleLoad: { at?: number; ms?: number } = {};

let clientBundle: Promise<typeof LanguageClientBundle> | undefined;

/**
 * The language client's bundle (dist/languageClient.js, built from ./languageClient.ts), required
 * on a later turn of the event loop: after activate() has returned and VS Code has taken its
 * result, so compiling it is not part of the extension's activation.
 */
export function loadClientBundle(): Promise<typeof LanguageClientBundle> {
  clientBundle ??= new Promise((resolve, reject) => setImmediate(() => {
    const t0 = performance.now();
    try {
      resolve(require('./languageClient.js'));
    } catch (e) {
      clientBundle = undefined;
      reject(e);
      return;
    }
    clientBundleLoad.at = t0;
    clientBundleLoad.ms = performance.now() - t0;
  }));
  return clientBundle;
}

const MAX_RESTARTS = 3;
const RESTART_WINDOW_MS = 3 * 60 * 1000;

export interface DaemonHooks {
  onUpdate(params: SessionUpdateParams): void;
  onPermission(params: PermissionParams, token: vscode.CancellationToken): Promise<PermissionResult>;
  onReady(restarted: boolean): void;
  /** Opens a web page agentd's window/showDocument names (an MCP server's sign-in page). */
  onOpenPage?(uri: string): Promise<boolean>;
}

/**
 * The output channel as the language client sees it: secrets served to agentd are masked, so a
 * verbose JSON-RPC trace never shows an API key.
 */
class RedactingChannel implements vscode.OutputChannel {
  readonly secrets = new Set<string>();
  constructor(private readonly inner: vscode.OutputChannel) {}
  get name() { return this.inner.name; }
  private redact(s: string): string {
    for (const v of this.secrets) if (v.length >= 4) s = s.split(v).join('«redacted»');
    return s;
  }
  append(value: string) { this.inner.append(this.redact(value)); }
  appendLine(value: string) { this.inner.appendLine(this.redact(value)); }
  replace(value: string) { this.inner.replace(this.redact(value)); }
  clear() { this.inner.clear(); }
  show(a?: any, b?: boolean) { this.inner.show(a, b); }
  hide() { this.inner.hide(); }
  dispose() { /* the real channel is owned by the extension */ }
}

export class Daemon implements vscode.Disposable {
  client: LanguageClient | undefined;
  state: DaemonState = { status: 'starting' };
  private readonly stateEmitter = new vscode.EventEmitter<DaemonState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private crashes: number[] = [];
  private protocolErrors: number[] = [];
  private startedOnce = false;
  /** Set when agentd crashed too often; only an explicit restart clears it. */
  private gaveUp = false;
  private lastSettingsWarning = '';
  private readonly disposables: vscode.Disposable[] = [];
  /**
   * Holds the requests made before agentd is first ready: activation returns before the language
   * client has even loaded, and a command run then should not fail. Later, while agentd restarts,
   * requests fail at once as before: the chat's session is being resumed or replaced meanwhile.
   */
  private readonly gate = new ReadyGate();
  private everReady = false;
  /** Counts calls of start(), so a start overtaken by a restart (or dispose) while it loaded the client gives up. */
  private starts = 0;
  private disposed = false;

  private readonly clientOutput: RedactingChannel;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.OutputChannel,
    private readonly hooks: DaemonHooks,
    private readonly keys: Keys,
  ) {
    this.clientOutput = new RedactingChannel(output);
    this.disposables.push(vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('agentd.path')) void this.restart('agentd.path changed');
      else if (e.affectsConfiguration('agentd.settings') || e.affectsConfiguration('agentd.mode')) void this.sendSettings();
    }));
  }

  private setState(s: DaemonState) {
    this.state = s;
    this.gate.set(s.status, s.message);
    this.stateEmitter.fire(s);
  }

  settings(): Settings {
    const cfg = vscode.workspace.getConfiguration('agentd');
    // The user's own settings only: a repository's .vscode/settings.json must not loosen agentd
    // (pure/settings.ts USER_ONLY_SETTINGS).
    const { settings, removed } = effectiveSettings(userValue(cfg.inspect('settings')), userMode(cfg.inspect<string>('mode')));
    if (removed.length && removed.join() !== this.lastSettingsWarning) {
      this.lastSettingsWarning = removed.join();
      const configure: vscode.MessageItem = { title: vscode.l10n.t('Configure Provider') };
      void vscode.window.showWarningMessage(
        vscode.l10n.t('agentd: ignored secret-looking settings ({0}). API keys do not belong in settings.json; use "agentd: Configure Provider" to keep them in VS Code\'s secret storage.', removed.join(', ')),
        configure,
      ).then((c) => { if (c === configure) void vscode.commands.executeCommand('agentd.configureProvider'); });
    }
    return settings;
  }

  async sendSettings() {
    const c = this.client;
    if (!c || !c.isRunning()) return;
    try {
      await c.sendNotification(ToDaemonNote.didChangeConfiguration, didChangeConfigurationParams(this.settings()));
    } catch (e: any) {
      this.output.appendLine(`[agentd] could not send settings: ${e?.message ?? e}`);
    }
  }

  async start(): Promise<void> {
    const run = ++this.starts;
    const cfg = vscode.workspace.getConfiguration('agentd');
    // A .vsix may lose the executable bit of the binary it ships; give it back.
    const shipped = bundledPath(this.context.extensionPath, process.platform, process.arch);
    try { if (process.platform !== 'win32' && fs.existsSync(shipped)) fs.chmodSync(shipped, 0o755); } catch { /* read-only install */ }
    const found = findAgentd({
      // Never a workspace's: a repository must not choose the program the editor runs.
      configuredPath: userValue(cfg.inspect<string>('path')) ?? '',
      extensionPath: this.context.extensionPath,
      platform: process.platform,
      arch: process.arch,
      pathEnv: process.env.PATH ?? '',
      homeDir: os.homedir(),
      isExecutable: (p) => { try { fs.accessSync(p, fs.constants.X_OK); return fs.statSync(p).isFile(); } catch { return false; } },
    });
    if (!found.ok) {
      this.setState({ status: 'error', message: found.message });
      this.output.appendLine(`[agentd] ${found.message}`);
      // Answers are known by the item clicked, never by its (translated) title.
      const settings: vscode.MessageItem = { title: vscode.l10n.t('Open Settings') };
      const logs: vscode.MessageItem = { title: vscode.l10n.t('Show Logs') };
      const choice = await vscode.window.showErrorMessage(found.message, settings, logs);
      if (choice === settings) void vscode.commands.executeCommand('workbench.action.openSettings', 'agentd.path');
      if (choice === logs) this.output.show(true);
      return;
    }
    this.output.appendLine(`[agentd] starting ${found.path} (${found.source})`);
    this.setState({ status: 'starting' });
    let lc: typeof LanguageClientBundle;
    try {
      lc = await loadClientBundle();
    } catch (e: any) {
      const message = vscode.l10n.t('agentd could not be started: {0}', String(e?.message ?? e));
      this.setState({ status: 'error', message });
      this.output.appendLine(`[agentd] ${message}`);
      return;
    }
    if (run !== this.starts || this.disposed) return;
    const { CloseAction, ErrorAction, LanguageClient, ResponseError, State, TransportKind, editor } = lc;

    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? os.homedir();
    const serverOptions: ServerOptions = {
      command: found.path,
      transport: TransportKind.stdio,
      options: { cwd: folder, env: { ...process.env } },
    };
    const ext = this.context.extension.packageJSON;
    const clientOptions: LanguageClientOptions = {
      // agentd pulls buffer text itself; no textDocument/did* traffic is needed.
      documentSelector: [],
      outputChannel: this.clientOutput,
      traceOutputChannel: this.clientOutput,
      revealOutputChannelOn: 4, // RevealOutputChannelOn.Never
      // agentd's window/showDocument opens an MCP server's sign-in page: only a web page, only
      // in the browser (src/mcpSignIn.ts).
      middleware: { window: { showDocument: (params, next) => showSignInPage(params, next as any, this.hooks.onOpenPage?.bind(this.hooks)) } },
      initializationOptions: () => initializationOptions(this.settings(), { name: 'agentd-vscode', title: 'agentd for VS Code', version: `${ext.version} (VS Code ${vscode.version})` }),
      initializationFailedHandler: (err) => {
        const msg = vscode.l10n.t('agentd failed to initialize: {0}', String(err?.message ?? err));
        this.output.appendLine(`[agentd] ${msg}`);
        // A process that died during initialize is the close handler's to report (restart or
        // give up); say something here only when agentd is alive and refused.
        setTimeout(() => {
          if (this.crashes.length || this.gaveUp) return;
          this.setState({ status: 'error', message: msg });
          this.showErrorWithLogs(msg);
        }, 1000);
        return false;
      },
      errorHandler: {
        error: (err, _msg, count) => {
          this.output.appendLine(`[agentd] connection error: ${err?.message ?? err}`);
          // Write errors (they carry a count) mean the process is gone: the close handler deals
          // with that. Read errors (garbage on agentd's stdout) come without one; count them.
          if (count !== undefined || !isProtocolError(err)) return { action: ErrorAction.Continue, handled: true };
          const now = Date.now();
          this.protocolErrors = this.protocolErrors.filter((t) => now - t < RESTART_WINDOW_MS);
          this.protocolErrors.push(now);
          if (this.protocolErrors.length >= 3 && !this.gaveUp) {
            const message = vscode.l10n.t('agentd sent data that is not valid JSON-RPC ({0}), so it was stopped. See "agentd: Show Logs", then run "agentd: Restart Daemon".', String(err?.message ?? err));
            this.gaveUp = true;
            this.setState({ status: 'error', message });
            this.showErrorWithLogs(message);
            // The client cannot stop while its initialize is pending; end the process itself.
            try { (this.client as any)?._serverProcess?.kill(); } catch { /* already gone */ }
            return { action: ErrorAction.Shutdown, handled: true };
          }
          return { action: ErrorAction.Continue, handled: true };
        },
        closed: () => {
          if (this.gaveUp) return { action: CloseAction.DoNotRestart, handled: true };
          const now = Date.now();
          this.crashes = this.crashes.filter((t) => now - t < RESTART_WINDOW_MS);
          this.crashes.push(now);
          if (this.crashes.length > MAX_RESTARTS) {
            this.gaveUp = true;
            const message = vscode.l10n.t('agentd stopped {0} times in a few minutes and will not be restarted. See "agentd: Show Logs", then run "agentd: Restart Daemon".', this.crashes.length);
            this.setState({ status: 'stopped', message });
            return { action: CloseAction.DoNotRestart, message };
          }
          this.setState({ status: 'starting', message: vscode.l10n.t('agentd exited unexpectedly; restarting ({0}/{1}).', this.crashes.length, MAX_RESTARTS) });
          this.output.appendLine(`[agentd] exited unexpectedly; restart ${this.crashes.length}/${MAX_RESTARTS}`);
          return { action: CloseAction.Restart, handled: true };
        },
      },
    };

    const client = new LanguageClient('agentd', 'agentd', serverOptions, clientOptions);
    this.client = client;
    // Every reverse request goes through here: typed by the protocol table, and a handler that
    // throws answers a JSON-RPC error instead of breaking the connection.
    const serve = <M extends DaemonRequest>(method: M, fn: (p: DaemonRequests[M]['params'], token: vscode.CancellationToken) => any) => {
      client.onRequest(method, async (p: any, token: vscode.CancellationToken) => {
        try {
          return await fn(p, token);
        } catch (e: any) {
          this.output.appendLine(`[agentd] ${method} failed: ${e?.stack ?? e}`);
          return new ResponseError(-32603, `${method}: ${e?.message ?? e}`);
        }
      });
    };
    serve(FromDaemon.readTextFile, editor.readTextFile);
    serve(FromDaemon.dirtyBuffers, editor.dirtyBuffers);
    const c2p = client.code2ProtocolConverter;
    serve(FromDaemon.diagnostics, (p) => editor.diagnostics(p, c2p));
    serve(FromDaemon.workspaceSymbols, (p) => editor.workspaceSymbols(p, c2p));
    serve(FromDaemon.saveBuffers, editor.saveBuffers);
    serve(FromDaemon.editorState, editor.editorState);
    serve(FromDaemon.secretsGet, async (p) => {
      const r = await editor.getSecret(this.keys, p);
      if (r && typeof r.value === 'string') this.clientOutput.secrets.add(r.value);
      return r;
    });
    serve(FromDaemon.requestPermission, (p, token) => this.hooks.onPermission(p, token));
    serve(FromDaemon.elicitationCreate, (p, token) => elicit(p, token));
    client.onNotification(FromDaemonNote.sessionUpdate, (p: SessionUpdateParams) => {
      try { this.hooks.onUpdate(p); } catch (e: any) { this.output.appendLine(`[agentd] bad update: ${e?.stack ?? e}`); }
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) {
        const restarted = this.startedOnce;
        this.startedOnce = true;
        this.everReady = true;
        this.setState({ status: 'ready' });
        this.hooks.onReady(restarted);
      } else if (e.newState === State.Stopped && this.state.status === 'ready') {
        this.setState({ status: 'stopped', message: vscode.l10n.t('agentd is not running.') });
      }
    });
    try {
      await client.start();
    } catch (e: any) {
      const message = vscode.l10n.t('agentd could not be started: {0}', String(e?.message ?? e));
      // Once the process has exited, the close handler owns the state (restarting, or given up).
      if (this.crashes.length === 0 && !this.gaveUp && this.state.status !== 'error') this.setState({ status: 'error', message });
      this.output.appendLine(`[agentd] ${message}`);
    }
  }

  /** Resolves once agentd is ready (at once when it is); rejects with the reason when it stops or cannot start. */
  whenReady(token?: vscode.CancellationToken): Promise<void> {
    return this.gate.wait(token);
  }

  /** A request to agentd (before it is first ready: once it is); rejects with a readable message when it is not running. */
  async request<M extends ClientRequest>(method: M, params: ClientRequests[M]['params'], token?: vscode.CancellationToken): Promise<ClientRequests[M]['result']> {
    if (!this.everReady) await this.gate.wait(token);
    const c = this.client;
    if (!c || !c.isRunning()) throw new Error(this.state.message ?? vscode.l10n.t('agentd is not running.'));
    return token ? c.sendRequest(method, params, token) : c.sendRequest(method, params);
  }

  /** An error notification with a Show Logs button. */
  private showErrorWithLogs(message: string) {
    const logs: vscode.MessageItem = { title: vscode.l10n.t('Show Logs') };
    void vscode.window.showErrorMessage(message, logs).then((c) => { if (c === logs) this.output.show(true); });
  }

  notify<M extends ClientNotification>(method: M, params: ClientNotifications[M]) {
    const c = this.client;
    if (c && c.isRunning()) void c.sendNotification(method, params).catch(() => undefined);
  }

  async restart(why: string) {
    this.output.appendLine(`[agentd] restart: ${why}`);
    this.crashes = [];
    this.protocolErrors = [];
    this.gaveUp = false;
    const c = this.client;
    this.client = undefined;
    this.startedOnce = false;
    if (c) {
      try { await c.stop(2000); } catch { /* already gone */ }
    }
    await this.start();
  }

  async dispose() {
    this.disposed = true;
    this.disposables.forEach((d) => d.dispose());
    const c = this.client;
    this.client = undefined;
    if (c) {
      try { await c.stop(2000); } catch { /* ignore */ }
    }
  }
}
