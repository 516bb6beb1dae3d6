// What the chat input offers as context: chips for the active file and its selection (kept
// current as the user moves around), and `@`/`#` mention completion of workspace files and
// symbols. The chips' content blocks go with the prompt (docs/protocol.md "ContentBlock").
import * as vscode from 'vscode';
import * as path from 'path';
import { Chip, fileChip, rangeChip } from './pure/mentions';

const MAX_SELECTION = 200_000;

/** The chip for a document, or undefined for one that is not a file. */
export function documentChip(doc: vscode.TextDocument): Chip | undefined {
  if (doc.uri.scheme !== 'file') return undefined;
  return fileChip(doc.uri.toString(), vscode.workspace.asRelativePath(doc.uri, false));
}

/** The chip for an editor's selection, or undefined when nothing is selected. */
export function selectionChip(ed: vscode.TextEditor): Chip | undefined {
  const sel = ed.selection;
  if (sel.isEmpty || ed.document.uri.scheme !== 'file') return undefined;
  const text = ed.document.getText(sel).slice(0, MAX_SELECTION);
  // A selection that ends at a line's first column does not take that line.
  const end = sel.end.character === 0 && sel.end.line > sel.start.line ? sel.end.line : sel.end.line + 1;
  return rangeChip('selection', ed.document.uri.toString(), path.basename(ed.document.uri.fsPath), sel.start.line + 1, end, text);
}

export class ComposerContext implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly post: (m: unknown) => void) {
    const later = () => {
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.send(), 150);
    };
    this.disposables.push(vscode.window.onDidChangeActiveTextEditor(later), vscode.window.onDidChangeTextEditorSelection(later));
  }

  /** Tells the view which file is active and what is selected in it. */
  send() {
    const ed = vscode.window.activeTextEditor;
    this.post({
      type: 'editorContext',
      file: ed ? documentChip(ed.document) ?? null : null,
      selection: ed ? selectionChip(ed) ?? null : null,
    });
  }

  /** Files whose path contains the query, then workspace symbols that match it. */
  async mentions(query: string, sigil: string): Promise<Array<{ chip: Chip; detail: string }>> {
    const out: Array<{ chip: Chip; detail: string }> = [];
    const q = query.replace(/[[\]{}*?!]/g, '');
    const files = await vscode.workspace.findFiles(q ? `**/*${q}*` : '**/*', '**/{node_modules,.git,dist,out}/**', 30);
    const lower = q.toLowerCase();
    files.sort((a, b) => score(a.fsPath, lower) - score(b.fsPath, lower) || a.fsPath.length - b.fsPath.length);
    for (const f of files.slice(0, 12)) {
      const rel = vscode.workspace.asRelativePath(f, false);
      out.push({ chip: fileChip(f.toString(), rel), detail: vscode.l10n.t('file') });
    }
    // Symbols come from the editor's language servers; `#` asks for them first.
    if (q.length >= 2) {
      let syms: vscode.SymbolInformation[] = [];
      try {
        syms = (await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', q)) ?? [];
      } catch { /* no symbol provider */ }
      const found: Array<{ chip: Chip; detail: string }> = [];
      for (const s of syms.slice(0, 12)) {
        if (s.location.uri.scheme !== 'file') continue;
        let text = '';
        try { text = (await vscode.workspace.openTextDocument(s.location.uri)).getText(s.location.range).slice(0, MAX_SELECTION); } catch { continue; }
        const r = s.location.range;
        found.push({
          chip: rangeChip('symbol', s.location.uri.toString(), s.name, r.start.line + 1, r.end.line + 1, text),
          detail: vscode.l10n.t('{0} in {1}', vscode.SymbolKind[s.kind] ?? vscode.l10n.t('symbol'), vscode.workspace.asRelativePath(s.location.uri, false)),
        });
      }
      if (sigil === '#') out.unshift(...found); else out.push(...found);
    }
    return out.slice(0, 20);
  }

  dispose() {
    if (this.timer) clearTimeout(this.timer);
    this.disposables.forEach((d) => d.dispose());
  }
}

/** Lower is better: a basename that starts with the query, then one that contains it. */
function score(p: string, q: string): number {
  const base = path.basename(p).toLowerCase();
  if (!q) return 0;
  if (base.startsWith(q)) return 0;
  if (base.includes(q)) return 1;
  return 2;
}
