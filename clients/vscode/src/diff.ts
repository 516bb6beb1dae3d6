// Opening an agent's file change in VS Code's diff editor: both sides are served from memory
// through a read-only content provider, so nothing touches the disk.
import * as vscode from 'vscode';
import * as path from 'path';

export const DIFF_SCHEME = 'agentd-diff';

export class DiffContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private seq = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  /** Serves `text` at a new read-only URI named `name` (for one side of a diff). */
  put(name: string, filePath: string, text: string): vscode.Uri {
    const n = ++this.seq;
    const u = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${n}/${name}`, query: filePath });
    this.texts.set(u.toString(), text);
    return u;
  }

  async open(filePath: string, oldText: string | null, newText: string) {
    const n = ++this.seq;
    const base = path.basename(filePath);
    const left = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${n}/before/${base}`, query: filePath });
    const right = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${n}/after/${base}`, query: filePath });
    this.texts.set(left.toString(), oldText ?? '');
    this.texts.set(right.toString(), newText);
    const title = oldText === null ? vscode.l10n.t('{0} (new file)', base) : vscode.l10n.t("{0} (agent's change)", base);
    await vscode.commands.executeCommand('vscode.diff', left, right, title, { preview: true });
  }
}
