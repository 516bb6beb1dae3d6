// MCP sign-in (docs/protocol.md "MCP sign-in"). A notice carrying _meta["agentd/mcpSignIn"] =
// {server} says one of the session's MCP servers needs the user to sign in: a warning toast offers
// "Sign in", as does the command agentd.mcpSignIn. Signing in is agent/mcp/signIn; while it runs,
// agentd sends window/showDocument {external: true}, which the language client answers by opening
// the authorization page in the browser (vscode.env.openExternal).
import * as vscode from 'vscode';
import type { Daemon } from './daemon';
import { SessionUpdateParams, ToDaemon } from './pure/protocol';
import { signInServer } from './pure/mcpSignIn';

export class McpSignIn {
  /** Servers waiting for a sign-in: name → the session that named them. */
  private readonly waiting = new Map<string, string>();

  constructor(private readonly daemon: Daemon) {}

  /** Hears every session update. */
  onUpdate(p: SessionUpdateParams): void {
    const server = signInServer(p);
    if (!server) return;
    const first = !this.waiting.has(server);
    this.waiting.set(server, p.sessionId);
    if (first) void this.offer(server);
  }

  private async offer(server: string): Promise<void> {
    const signIn = vscode.l10n.t('Sign in');
    const pick = await vscode.window.showWarningMessage(vscode.l10n.t('agentd: MCP server {0} needs you to sign in.', server), signIn);
    if (pick === signIn) await this.signIn(server);
  }

  /** Runs the sign-in of server (asking which when none is given and several wait). */
  async signIn(server?: string): Promise<void> {
    if (!server) {
      const names = [...this.waiting.keys()].sort();
      if (names.length === 0) {
        void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no MCP server is waiting for a sign-in.'));
        return;
      }
      server = names.length === 1 ? names[0] : await vscode.window.showQuickPick(names, { title: vscode.l10n.t('agentd: Sign in to MCP Server') });
      if (!server) return;
    }
    const sessionId = this.waiting.get(server);
    if (!sessionId) return;
    const name = server;
    await vscode.window.withProgress({
      location: vscode.ProgressLocation.Notification, cancellable: true,
      title: vscode.l10n.t('agentd: signing in to {0}; finish in your browser…', name),
    }, async (_progress, token) => {
      try {
        await this.daemon.request(ToDaemon.mcpSignIn, { sessionId, server: name }, token);
        this.waiting.delete(name);
        void vscode.window.showInformationMessage(vscode.l10n.t('agentd: signed in to {0}; its tools join the next turn.', name));
      } catch (e: any) {
        if (token.isCancellationRequested) return;
        void vscode.window.showErrorMessage(vscode.l10n.t('agentd: sign-in to {0} failed: {1}', name, String(e?.message ?? e)));
      }
    });
  }
}
