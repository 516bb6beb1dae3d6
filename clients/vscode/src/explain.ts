// agentd: Explain Selection: the selected code explained by the user's model through
// agent/x/infer (one-off inference, outside any chat session), shown in a Markdown document
// beside the code. The same prompt as Neovim's :AgentdExplain.
import * as vscode from 'vscode';
import { Daemon } from './daemon';
import { ToDaemon } from './pure/protocol';

export const SYSTEM = 'You explain code to the programmer who is reading it. Say what the code does and why, '
  + 'briefly, in plain prose; point out a bug if you see one. Do not repeat the code.';

/** The prompt for lines `first`..`last` (1-based) of `where` in language `lang`. */
export function explainPrompt(where: string, lang: string, first: number, last: number, code: string): string {
  return `Lines ${first}-${last} of ${where}:\n\`\`\`${lang}\n${code}\n\`\`\``;
}

export function registerExplain(context: vscode.ExtensionContext, daemon: Daemon): void {
  context.subscriptions.push(vscode.commands.registerCommand('agentd.explainSelection', async () => {
    const ed = vscode.window.activeTextEditor;
    if (!ed) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Open a file and select the code to explain.'));
      return;
    }
    // No selection: the current line.
    const sel = ed.selection.isEmpty ? ed.document.lineAt(ed.selection.active.line).range : ed.selection;
    const code = ed.document.getText(sel);
    if (!code.trim()) {
      void vscode.window.showInformationMessage(vscode.l10n.t('Select the code to explain.'));
      return;
    }
    const where = vscode.workspace.asRelativePath(ed.document.uri);
    const prompt = explainPrompt(where, ed.document.languageId, sel.start.line + 1, sel.end.line + 1, code);
    try {
      const r = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: vscode.l10n.t('agentd is explaining {0}…', where), cancellable: true },
        (_p, token) => daemon.request(ToDaemon.infer, { system: SYSTEM, prompt }, token));
      const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: r.text });
      await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    } catch (e) {
      if (e instanceof vscode.CancellationError || /cancel/i.test(String(e))) return;
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd could not explain the selection: {0}', e instanceof Error ? e.message : String(e)));
    }
  }));
}
