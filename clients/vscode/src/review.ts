// Reviewing a turn's edits in the editor: each file the agent changed is compared with its text
// before the turn (the baseline, from the tool calls' diffs), and every hunk gets Keep / Undo
// CodeLenses, with Keep All / Undo All on the first line. Keep moves the hunk into the baseline;
// Undo puts the baseline's lines back into the buffer (unsaved, one Ctrl+Z away). A file leaves
// the review when no hunk is left.
import * as vscode from 'vscode';
import * as path from 'path';
import { Hunk, hunkAt, hunkFrom, hunks, hunkStat, keepHunk, offsetOfLine, onlyRemovals, splitLines } from './pure/hunks';
import { DIFF_SCHEME, DiffContent } from './diff';

interface Reviewed { baseline: string; created: boolean }

export class Review implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly files = new Map<string, Reviewed>();
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly added = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor('diffEditor.insertedLineBackground'),
    overviewRulerColor: new vscode.ThemeColor('editorOverviewRuler.addedForeground'),
    overviewRulerLane: vscode.OverviewRulerLane.Left,
  });
  private readonly disposables: vscode.Disposable[] = [];
  /** Fires whenever the set of files under review changes (a hunk kept or undone, a file reverted). */
  private readonly filesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeFiles = this.filesChanged.event;

  constructor(private readonly diffs: DiffContent) {
    this.disposables.push(
      this.changed, this.added, this.filesChanged,
      vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this),
      // A change that leaves the buffer clean (File: Revert File, or an undo back to the saved text)
      // is checked as a possible end of the review too; see settle.
      vscode.workspace.onDidChangeTextDocument((e) => { if (this.files.has(key(e.document.uri))) this.settle(e.document, !e.document.isDirty); }),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.window.onDidChangeActiveTextEditor(() => this.setActiveContext()),
      vscode.commands.registerCommand('agentd.review.keep', (p: string, oldStart: number, newStart: number) => this.keep(p, oldStart, newStart)),
      vscode.commands.registerCommand('agentd.review.undo', (p: string, oldStart: number, newStart: number) => this.undo(p, oldStart, newStart)),
      vscode.commands.registerCommand('agentd.keepAll', () => this.keepAll()),
      vscode.commands.registerCommand('agentd.undoAll', () => this.undoAll()),
      // The keyboard's way (issue 33 item 6): the hunk at the cursor, and the next or previous one.
      vscode.commands.registerCommand('agentd.review.keepHunk', () => this.atCursor('keep')),
      vscode.commands.registerCommand('agentd.review.undoHunk', () => this.atCursor('undo')),
      vscode.commands.registerCommand('agentd.review.nextHunk', () => this.goTo(1)),
      vscode.commands.registerCommand('agentd.review.previousHunk', () => this.goTo(-1)),
    );
  }

  /** Files now under review (absolute paths). */
  get paths(): string[] { return [...this.files.keys()]; }

  has(p: string): boolean { return this.files.has(path.normalize(p)); }

  /** Starts reviewing a turn's files; a file already under review keeps its older baseline. */
  track(baselines: Array<{ path: string; baseline: string; created: boolean }>) {
    for (const b of baselines) {
      const k = path.normalize(b.path);
      if (!this.files.has(k)) this.files.set(k, { baseline: b.baseline, created: b.created });
    }
    this.refresh();
  }

  /** Stops reviewing files (restored from a checkpoint, say). */
  forget(paths: string[]) {
    for (const p of paths) this.files.delete(path.normalize(p));
    this.refresh();
  }

  private refresh() {
    this.changed.fire();
    this.filesChanged.fire();
    this.decorate();
    void vscode.commands.executeCommand('setContext', 'agentd.reviewing', this.files.size > 0);
    this.setActiveContext();
  }

  /** `agentd.reviewingFile`: the active editor's file has hunks under review (the hunk keys' `when`). */
  private setActiveContext() {
    const ed = vscode.window.activeTextEditor;
    void vscode.commands.executeCommand('setContext', 'agentd.reviewingFile', !!ed && this.files.has(key(ed.document.uri)));
  }

  /** Keep or Undo the hunk at the active editor's cursor. */
  private async atCursor(what: 'keep' | 'undo') {
    const ed = vscode.window.activeTextEditor;
    const h = ed && this.files.has(key(ed.document.uri)) ? hunkAt(this.hunksOf(ed.document), ed.selection.active.line) : undefined;
    if (!ed || !h) {
      void vscode.window.setStatusBarMessage(vscode.l10n.t('agentd: no change under review at the cursor'), 3000);
      return;
    }
    if (what === 'keep') await this.keep(ed.document.uri.fsPath, h.oldStart, h.newStart);
    else await this.undo(ed.document.uri.fsPath, h.oldStart, h.newStart);
  }

  /** Moves the cursor to the next (1) or previous (-1) hunk under review in the active editor. */
  private goTo(dir: 1 | -1) {
    const ed = vscode.window.activeTextEditor;
    const h = ed && this.files.has(key(ed.document.uri)) ? hunkFrom(this.hunksOf(ed.document), ed.selection.active.line, dir) : undefined;
    if (!ed || !h) {
      void vscode.window.setStatusBarMessage(vscode.l10n.t('agentd: no change under review in this file'), 3000);
      return;
    }
    const at = new vscode.Position(Math.min(h.newStart, Math.max(0, ed.document.lineCount - 1)), 0);
    ed.selection = new vscode.Selection(at, at);
    ed.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  private async current(p: string): Promise<vscode.TextDocument | undefined> {
    try { return await vscode.workspace.openTextDocument(vscode.Uri.file(p)); } catch { return undefined; }
  }

  private hunksOf(doc: vscode.TextDocument): Hunk[] {
    const r = this.files.get(key(doc.uri));
    return r ? hunks(r.baseline, doc.getText()) : [];
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const r = this.files.get(key(doc.uri));
    if (!r) return [];
    const hs = this.hunksOf(doc);
    if (!hs.length) return [];
    const p = doc.uri.fsPath;
    const top = new vscode.Range(0, 0, 0, 0);
    const lenses = [
      new vscode.CodeLens(top, { title: hs.length === 1 ? vscode.l10n.t('agentd: 1 change to review') : vscode.l10n.t('agentd: {0} changes to review', hs.length), command: '' }),
      new vscode.CodeLens(top, { title: vscode.l10n.t('Keep All'), command: 'agentd.keepAll', tooltip: vscode.l10n.t("Keep every change of agentd's turn in every file") }),
      new vscode.CodeLens(top, { title: vscode.l10n.t('Undo All'), command: 'agentd.undoAll', tooltip: vscode.l10n.t("Undo every change of agentd's turn in every file") }),
    ];
    for (const h of hs) {
      const line = Math.min(h.newStart, Math.max(0, doc.lineCount - 1));
      const at = new vscode.Range(line, 0, line, 0);
      lenses.push(
        new vscode.CodeLens(at, { title: vscode.l10n.t('Keep ({0})', hunkStat(h)), command: 'agentd.review.keep', arguments: [p, h.oldStart, h.newStart], tooltip: vscode.l10n.t('Keep this change') }),
        new vscode.CodeLens(at, { title: vscode.l10n.t('Undo'), command: 'agentd.review.undo', arguments: [p, h.oldStart, h.newStart], tooltip: vscode.l10n.t("Put this hunk's old lines back") }),
      );
    }
    return lenses;
  }

  private decorate() {
    for (const ed of vscode.window.visibleTextEditors) {
      const ranges: vscode.Range[] = [];
      if (this.files.has(key(ed.document.uri))) {
        for (const h of this.hunksOf(ed.document)) {
          if (h.newLines.length) ranges.push(new vscode.Range(h.newStart, 0, h.newStart + h.newLines.length - 1, 0));
        }
      }
      ed.setDecorations(this.added, ranges);
    }
  }

  private async find(p: string, oldStart: number, newStart: number): Promise<{ doc: vscode.TextDocument; h: Hunk } | undefined> {
    if (!this.files.has(path.normalize(p))) return undefined;
    const doc = await this.current(p);
    const h = doc && this.hunksOf(doc).find((x) => x.oldStart === oldStart && x.newStart === newStart);
    return doc && h ? { doc, h } : undefined;
  }

  async keep(p: string, oldStart: number, newStart: number) {
    const f = await this.find(p, oldStart, newStart);
    const r = this.files.get(path.normalize(p));
    if (!f || !r) return;
    r.baseline = keepHunk(r.baseline, f.h);
    this.settle(f.doc);
  }

  async undo(p: string, oldStart: number, newStart: number) {
    const f = await this.find(p, oldStart, newStart);
    if (!f) return;
    const lines = splitLines(f.doc.getText());
    const from = f.doc.positionAt(offsetOfLine(lines, f.h.newStart));
    const to = f.doc.positionAt(offsetOfLine(lines, f.h.newStart + f.h.newLines.length));
    const edit = new vscode.WorkspaceEdit();
    edit.replace(f.doc.uri, new vscode.Range(from, to), f.h.oldLines.join(''));
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage(vscode.l10n.t('agentd: VS Code did not apply the undo (the file changed meanwhile?).'));
      return;
    }
    this.settle(f.doc);
  }

  /**
   * A file whose text is its baseline again has nothing left to review. Nor has one that became
   * clean (reverted to the file on disk) with none of the agent's lines left in it: what still
   * differs from the baseline is then only the user's own unsaved text that the revert threw away,
   * which is not the agent's change to keep or undo. A clean buffer that still holds an added line
   * (the agent's edit was saved, say) stays under review.
   */
  private settle(doc: vscode.TextDocument, clean = false) {
    const k = key(doc.uri);
    const r = this.files.get(k);
    if (r && (r.baseline === doc.getText() || (clean && onlyRemovals(hunks(r.baseline, doc.getText()))))) this.files.delete(k);
    this.refresh();
  }

  keepAll() {
    this.files.clear();
    this.refresh();
  }

  /** Every reviewed file back to its baseline, in one edit; a file the turn created is deleted. */
  async undoAll() {
    const edit = new vscode.WorkspaceEdit();
    for (const [p, r] of this.files) {
      const doc = await this.current(p);
      if (!doc) continue;
      if (r.created && r.baseline === '') { edit.deleteFile(doc.uri, { ignoreIfNotExists: true }); continue; }
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), r.baseline);
    }
    if (!(await vscode.workspace.applyEdit(edit))) {
      void vscode.window.showWarningMessage(vscode.l10n.t('agentd: VS Code did not apply the undo.'));
      return;
    }
    this.files.clear();
    this.refresh();
  }

  /** The diff editor: the file before the turn on the left, the editor's text on the right. */
  async openDiff(p: string): Promise<boolean> {
    const r = this.files.get(path.normalize(p));
    if (!r) return false;
    const left = this.diffs.put(`${path.basename(p)}.before`, p, r.baseline);
    await vscode.commands.executeCommand('vscode.diff', left, vscode.Uri.file(p), vscode.l10n.t("{0} (agentd's changes)", path.basename(p)), { preview: true });
    return true;
  }

  dispose() { this.disposables.forEach((d) => d.dispose()); }
}

function key(u: vscode.Uri): string { return path.normalize(u.fsPath); }

export { DIFF_SCHEME };
