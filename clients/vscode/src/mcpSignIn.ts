// MCP sign-in (docs/protocol.md "MCP sign-in", "Signing in from a remote editor"). A notice
// carrying _meta["agentd/mcpSignIn"] = {server} says one of the session's MCP servers needs the
// user to sign in: a warning toast offers "Sign in", as do the command agentd.mcpSignIn and the
// MCP view's item. Signing in is agent/mcp/signIn; while it runs, agentd sends
// window/showDocument {external: true}, which opens the authorization page in the browser
// (openPage). In a remote window the browser may not reach agentd's loopback callback: there the
// user is also offered "Copy link" and "Paste the address your browser ended on", which hands
// that address to agent/x/mcp/completeSignIn. "Sign out" is agent/x/mcp/signOut.
import * as vscode from 'vscode';
import type { Daemon } from './daemon';
import { SessionUpdateParams, ToDaemon } from './pure/protocol';
import { browserMayBeElsewhere, isWebURL, loopbackOrigin, pageBehindProxy, pastedAddressProblem, signInServer } from './pure/mcpSignIn';

/**
 * Opens a web page in the user's browser as it is. The URL goes to openExternal as a string, so
 * the host opens those exact characters (a Uri would be re-encoded). In a window whose browser
 * may be elsewhere, the host maps a loopback page to an address that browser reaches when it
 * opens it: a port forward keeps its path and query (VS Code Remote), a port proxy drops them
 * (code-server turns http://127.0.0.1:PORT/authorize?… into http://HOST/proxy/PORT/). Where they
 * would be dropped, the page is opened at the proxy address of its origin with its path and
 * query put back. asExternalUri is asked only about a loopback page: it is for addresses the
 * browser must reach on agentd's machine, never for an authorization server elsewhere.
 */
export async function openPage(uri: string): Promise<boolean> {
  if (!isWebURL(uri)) return false;
  let target = uri;
  const origin = loopbackOrigin(uri);
  if (origin && browserMayBeElsewhere(vscode.env.remoteName, vscode.env.uiKind === vscode.UIKind.Web)) {
    try {
      const page = vscode.Uri.parse(uri);
      const mapped = await vscode.env.asExternalUri(page);
      if (mapped.path !== page.path || mapped.query !== page.query) {
        target = pageBehindProxy(uri, origin, (await vscode.env.asExternalUri(vscode.Uri.parse(origin))).toString(true));
      }
    } catch {
      // The host cannot resolve it: open it as it is.
    }
  }
  return vscode.env.openExternal(target as unknown as vscode.Uri);
}

/** One sign-in under way: its session and, once agentd asked to open it, its page. */
interface Running {
  sessionId: string;
  link?: string;
  offered: boolean;
}

export class McpSignIn {
  /** Servers waiting for a sign-in: name → the session that named them. */
  private readonly waiting = new Map<string, string>();
  /** Sign-ins under way, by server, the newest last. */
  private readonly running = new Map<string, Running>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** Fires when a sign-in or sign-out ended (the MCP view lists the servers again). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly daemon: Daemon) {}

  dispose() {
    this.changed.dispose();
  }

  /** Hears every session update. */
  onUpdate(p: SessionUpdateParams): void {
    const server = signInServer(p);
    if (!server) return;
    const first = !this.waiting.has(server);
    this.waiting.set(server, p.sessionId);
    if (first) void this.offer(server);
  }

  private async offer(server: string): Promise<void> {
    const signIn: vscode.MessageItem = { title: vscode.l10n.t('Sign in') };
    const pick = await vscode.window.showWarningMessage(vscode.l10n.t('agentd: MCP server {0} needs you to sign in.', server), signIn);
    if (pick === signIn) await this.signIn(server);
  }

  /**
   * agentd's window/showDocument: opens the page, and when a sign-in is under way in a window
   * whose browser may be on another machine, offers to copy its link and to paste the address
   * the browser ended on.
   */
  async openPage(uri: string): Promise<boolean> {
    const opened = await openPage(uri);
    const last = [...this.running.entries()].pop();
    if (last && !last[1].offered && browserMayBeElsewhere(vscode.env.remoteName, vscode.env.uiKind === vscode.UIKind.Web)) {
      last[1].link = uri;
      last[1].offered = true;
      void this.offerPaste(last[0], last[1]);
    }
    return opened;
  }

  /** "Copy link" / "Paste the address your browser ended on", until the sign-in ends. */
  private async offerPaste(server: string, run: Running): Promise<void> {
    const paste: vscode.MessageItem = { title: vscode.l10n.t('Paste the address your browser ended on') };
    const copy: vscode.MessageItem = { title: vscode.l10n.t('Copy link') };
    while (this.running.get(server) === run) {
      const pick = await vscode.window.showInformationMessage(
        vscode.l10n.t('agentd: sign in to {0} in your browser. If the browser is not on the machine agentd runs on, its last page does not load: paste that page\'s address here.', server),
        paste, copy);
      if (this.running.get(server) !== run) return;
      if (pick === copy) {
        await vscode.env.clipboard.writeText(run.link ?? '');
        continue;
      }
      if (pick !== paste) return; // dismissed: the command agentd.mcpSignIn… starts again
      const address = await vscode.window.showInputBox({
        title: vscode.l10n.t('agentd: finish signing in to {0}', server),
        prompt: vscode.l10n.t('The whole address from the browser\'s address bar, after you approved (it goes to http://127.0.0.1:…/oauth/callback).'),
        placeHolder: 'http://127.0.0.1:…/oauth/callback?code=…&state=…',
        ignoreFocusOut: true,
        validateInput: (v) => pastedAddressProblem(v),
      });
      if (address === undefined || this.running.get(server) !== run) continue;
      try {
        await this.daemon.request(ToDaemon.mcpCompleteSignIn, { sessionId: run.sessionId, server, callbackUrl: address.trim() });
        return; // agent/mcp/signIn answers too, and says so
      } catch (e: any) {
        if (this.running.get(server) !== run) return; // the sign-in ended with it, and said why
        void vscode.window.showErrorMessage(vscode.l10n.t('agentd: that address did not complete the sign-in to {0}: {1}', server, String(e?.message ?? e)));
      }
    }
  }

  /**
   * Runs the sign-in of server (asking which when none is given and several wait); sessionId,
   * when given, is the session whose server it is (the MCP view's), else the one whose notice
   * named it.
   */
  async signIn(server?: string, sessionId?: string): Promise<void> {
    if (!server) {
      const names = [...this.waiting.keys()].sort();
      if (names.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no MCP server is waiting for a sign-in.'));
        return;
      }
      server = names.length === 1 ? names[0] : await vscode.window.showQuickPick(names, { title: vscode.l10n.t('agentd: Sign in to MCP Server') });
      if (!server) return;
    }
    sessionId ??= this.waiting.get(server);
    if (!sessionId) return;
    const name = server, sid = sessionId;
    if (this.running.has(name)) {
      void vscode.window.showInformationMessage(vscode.l10n.t('agentd: a sign-in to {0} is already under way; finish it in your browser.', name));
      return;
    }
    const run: Running = { sessionId: sid, offered: false };
    this.running.set(name, run);
    try {
      await vscode.window.withProgress({
        location: vscode.ProgressLocation.Notification, cancellable: true,
        title: vscode.l10n.t('agentd: signing in to {0}; finish in your browser…', name),
      }, async (_progress, token) => {
        try {
          await this.daemon.request(ToDaemon.mcpSignIn, { sessionId: sid, server: name }, token);
          this.waiting.delete(name);
          void vscode.window.showInformationMessage(vscode.l10n.t('agentd: signed in to {0}; its tools join the next turn.', name));
        } catch (e: any) {
          if (token.isCancellationRequested) return;
          void vscode.window.showErrorMessage(vscode.l10n.t('agentd: sign-in to {0} failed: {1}', name, String(e?.message ?? e)));
        }
      });
    } finally {
      if (this.running.get(name) === run) this.running.delete(name);
      this.changed.fire();
    }
  }

  /** Forgets server's tokens (agent/x/mcp/signOut), after asking. */
  async signOut(server: string, sessionId: string): Promise<void> {
    const out: vscode.MessageItem = { title: vscode.l10n.t('Sign out') };
    const pick = await vscode.window.showWarningMessage(
      vscode.l10n.t('agentd: sign out of MCP server {0}? agentd forgets its tokens, and its tools are skipped until you sign in again.', server), { modal: true }, out);
    if (pick !== out) return;
    try {
      const res = await this.daemon.request(ToDaemon.mcpSignOut, { sessionId, server });
      void vscode.window.showInformationMessage(res.hadTokens
        ? vscode.l10n.t('agentd: signed out of {0}; its tokens are forgotten.', server)
        : vscode.l10n.t('agentd: no tokens were kept for {0}.', server));
    } catch (e: any) {
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: sign-out of {0} failed: {1}', server, String(e?.message ?? e)));
    } finally {
      this.changed.fire();
    }
  }
}
