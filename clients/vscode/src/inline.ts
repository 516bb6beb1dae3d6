// Inline completions (ghost text): VS Code asks this provider as the user types; it forwards to
// agentd's LSP 3.18 textDocument/inlineCompletion with only the document's URI and the position,
// and agentd reads the text back through agent/fs/read_text_file (unsaved changes included).
// Tab accepts (VS Code's default for inline suggestions). A status-bar item turns suggestions on
// and off; the choice is the user-scope setting agentd.inlineSuggestions.enabled.
//
// The language client's own InlineCompletionItemFeature is a proposed feature in 9.0.1 and would
// register for the client's document selector, which is empty (agentd pulls buffers itself), so
// the provider is registered here, for file: documents only (agentd refuses other URIs).
import * as vscode from 'vscode';
import { Daemon } from './daemon';
import { ToDaemon, ToDaemonNote } from './pure/protocol';
import { inlineItems } from './pure/inline';

export const SETTING = 'inlineSuggestions.enabled';

export function enabled(): boolean {
  return vscode.workspace.getConfiguration('agentd').get<boolean>(SETTING, true) !== false;
}

export function registerInline(context: vscode.ExtensionContext, daemon: Daemon): void {
  // agentd advertises inlineCompletionProvider when its settings name a completion model at
  // start; one added later (the user's agentd.settings.completion) is served without a restart.
  const advertised = () => daemon.state.status === 'ready' && (!!daemon.client?.initializeResult?.capabilities?.inlineCompletionProvider
    || !!vscode.workspace.getConfiguration('agentd').inspect<Record<string, unknown>>('settings')?.globalValue?.completion);
  const provider: vscode.InlineCompletionItemProvider = {
    async provideInlineCompletionItems(doc, pos, ctx, token) {
      if (!enabled() || !advertised() || doc.uri.scheme !== 'file') return undefined;
      try {
        const r = await daemon.request(ToDaemon.inlineCompletion, {
          textDocument: { uri: doc.uri.toString() },
          position: { line: pos.line, character: pos.character },
          context: { triggerKind: ctx.triggerKind === vscode.InlineCompletionTriggerKind.Invoke ? 1 : 2 },
        }, token);
        if (token.isCancellationRequested) return undefined;
        return inlineItems(r).map((i) => new vscode.InlineCompletionItem(
          i.snippet ? new vscode.SnippetString(i.text) : i.text,
          // No range: inserted at the position (VS Code's default, the word before the cursor,
          // would have to be repeated by the text).
          i.range ? new vscode.Range(i.range.start.line, i.range.start.character, i.range.end.line, i.range.end.character) : new vscode.Range(pos, pos),
        ));
      } catch {
        // A cancelled or failed request shows nothing; agentd logs its own failures.
        return undefined;
      }
    },
  };
  const item = vscode.window.createStatusBarItem('agentd.inline', vscode.StatusBarAlignment.Right, 99);
  item.name = vscode.l10n.t('agentd inline suggestions');
  item.command = 'agentd.toggleInlineSuggestions';
  const paint = () => {
    const on = enabled();
    // Icons only: "agentd" in the text is the daemon's own item.
    item.text = on ? '$(sparkle)' : '$(circle-slash)';
    item.tooltip = on
      ? vscode.l10n.t('agentd inline suggestions are on; click to turn them off')
      : vscode.l10n.t('agentd inline suggestions are off; click to turn them on');
    item.accessibilityInformation = { label: item.tooltip as string };
    if (advertised()) item.show();
    else item.hide();
  };
  paint();
  context.subscriptions.push(
    item,
    vscode.languages.registerInlineCompletionItemProvider({ scheme: 'file' }, provider),
    vscode.commands.registerCommand('agentd.toggleInlineSuggestions', async () => {
      // User scope: the choice follows the user, not a repository's .vscode/settings.json.
      await vscode.workspace.getConfiguration('agentd').update(SETTING, !enabled(), vscode.ConfigurationTarget.Global);
      paint();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => { if (e.affectsConfiguration(`agentd.${SETTING}`) || e.affectsConfiguration('agentd.settings')) paint(); }),
    daemon.onDidChangeState(paint),
    // agentd keeps a document's last suggestion (to answer typing through it) until it closes.
    vscode.workspace.onDidCloseTextDocument((doc) => {
      if (doc.uri.scheme === 'file' && advertised()) daemon.notify(ToDaemonNote.didClose, { textDocument: { uri: doc.uri.toString() } });
    }),
  );
}
