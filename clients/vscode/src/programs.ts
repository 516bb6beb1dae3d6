// The background programs of the open chats (run_program {background: true}): a tree view that
// lists them with their state and a Stop action, and the agentd.stopProgram command. The list is
// agentd's (agent/x/programs/list), fetched again when an update says a program started or ended.
import * as vscode from 'vscode';
import { Chats } from './chats';
import { Daemon } from './daemon';
import { SessionUpdateParams, ToDaemon } from './pure/protocol';
import { programLine, ProgramEntry } from './pure/sandbox';
import { quoteArgv, visible } from './pure/viewmodel';

interface Row { sessionId: string; program: ProgramEntry }

export class Programs implements vscode.TreeDataProvider<Row>, vscode.Disposable {
  private rows: Row[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subs: vscode.Disposable[] = [];

  constructor(private readonly daemon: Daemon, private readonly chats: Chats) {
    this.subs.push(vscode.window.registerTreeDataProvider('agentd.programs', this), chats.onDidChange(() => void this.refresh()),
      vscode.commands.registerCommand('agentd.stopProgram', (arg?: Partial<Row> & { programId?: string }) => this.stop(arg)));
  }

  /** An agent/session/update: a program started (its call's rawOutput) or ended (`_meta["agentd/program"]`). */
  onUpdate(p: SessionUpdateParams) {
    const u = p?.update as any;
    if (u?.rawOutput?.programId !== undefined || u?._meta?.['agentd/program'] !== undefined) void this.refresh();
  }

  async refresh() {
    const rows: Row[] = [];
    for (const chat of this.chats.all) {
      const sessionId = chat.state.sessionId;
      if (!sessionId) continue;
      try {
        const r = await this.daemon.request(ToDaemon.programsList, { sessionId });
        for (const program of r?.programs ?? []) rows.push({ sessionId, program });
      } catch { /* a session agentd no longer has lists nothing */ }
    }
    this.rows = rows;
    void vscode.commands.executeCommand('setContext', 'agentd.programsListed', rows.length > 0);
    this.changed.fire();
  }

  getChildren(): Row[] { return this.rows; }

  getTreeItem(r: Row): vscode.TreeItem {
    const line = programLine(r.program, quoteArgv((r.program.command ?? []).map(String)));
    const item = new vscode.TreeItem(visible(line));
    item.tooltip = visible(`${line}\n${vscode.l10n.t('in {0}', String(r.program.cwd ?? ''))}`);
    item.contextValue = r.program.state === 'running' ? 'running' : 'ended';
    item.iconPath = new vscode.ThemeIcon(r.program.state === 'running' ? 'play-circle' : 'circle-outline');
    return item;
  }

  /** Stops the program given (a tree row, or the chat's Stop button), else the one picked. */
  private async stop(arg?: Partial<Row> & { programId?: string }) {
    let sessionId = arg?.sessionId, programId = arg?.program?.programId ?? arg?.programId;
    if (!sessionId || !programId) {
      await this.refresh();
      const running = this.rows.filter((r) => r.program.state === 'running');
      if (!running.length) { void vscode.window.showInformationMessage(vscode.l10n.t('agentd: no background program is running')); return; }
      const pick = await vscode.window.showQuickPick(running.map((r) => ({ label: visible(programLine(r.program, quoteArgv(r.program.command.map(String)))), r })), { title: vscode.l10n.t('agentd: Stop Background Program') });
      if (!pick) return;
      ({ sessionId } = pick.r); programId = pick.r.program.programId;
    }
    try {
      await this.daemon.request(ToDaemon.programsStop, { sessionId, programId });
    } catch (e) {
      void vscode.window.showErrorMessage(vscode.l10n.t('agentd: could not stop {0}: {1}', visible(programId), e instanceof Error ? e.message : String(e)));
    }
    await this.refresh();
  }

  dispose() { this.subs.forEach((d) => d.dispose()); this.changed.dispose(); }
}
