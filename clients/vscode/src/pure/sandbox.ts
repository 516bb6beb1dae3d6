// What the chat shows of the OS sandbox agentd runs programs in (docs/protocol.md, "The sandbox"):
// whether a program runs sandboxed (`_meta["agentd/sandbox"]`), the model's reason when it asks
// to run outside it (`rawInput.sandbox: false` with `justification`), and the state of a
// background program (`rawOutput.programId`, then `_meta["agentd/program"]` when it ends).
import * as l10n from '@vscode/l10n';

export interface SandboxInfo { applied: boolean; network: boolean; writable: string[] }
export interface ProgramState { id: string; state: string; exitCode?: number }
/** A background program as agent/x/programs/list gives it. */
export interface ProgramEntry { programId: string; command: string[]; cwd: string; state: string; exitCode?: number; sandboxed: boolean; toolCallId?: string }

export function sandboxOf(meta: any): SandboxInfo | undefined {
  const s = meta?.['agentd/sandbox'];
  if (!s || typeof s !== 'object') return undefined;
  return { applied: s.applied === true, network: s.network === true, writable: Array.isArray(s.writable) ? s.writable.map((w: unknown) => String(w)) : [] };
}

/** The card's line about the sandbox: what a sandboxed program may write, or that it runs with the user's rights. */
export function sandboxText(s: SandboxInfo): string {
  if (!s.applied) return l10n.t('Not sandboxed: it runs with your full rights.');
  const net = s.network ? l10n.t('network on') : l10n.t('no network');
  return l10n.t('Sandboxed: writes only {0}; {1}.', s.writable.join(', '), net);
}

/** The model's reason for running a program outside the sandbox, when it asks to (the model's text: show it through visible). */
export function escalationOf(rawInput: any): string | undefined {
  if (!rawInput || typeof rawInput !== 'object' || rawInput.sandbox !== false) return undefined;
  return typeof rawInput.justification === 'string' && rawInput.justification ? rawInput.justification : l10n.t('(no reason given)');
}

/** A background program's state from a tool update, or the previous one. */
export function programOf(u: any, prev?: ProgramState): ProgramState | undefined {
  const p = u?._meta?.['agentd/program'];
  if (p && typeof p === 'object' && typeof p.programId === 'string') {
    return { id: p.programId, state: String(p.state ?? ''), exitCode: typeof p.exitCode === 'number' ? p.exitCode : undefined };
  }
  const id = u?.rawOutput?.programId;
  if (!prev && typeof id === 'string') return { id, state: 'running' };
  return prev;
}

/** "prog_1 running", "prog_1 exited 0", "prog_1 stopped". */
export function programText(p: ProgramState): string {
  if (p.state === 'running') return l10n.t('{0} running', p.id);
  if (p.state === 'stopped') return l10n.t('{0} stopped', p.id);
  return l10n.t('{0} exited {1}', p.id, String(p.exitCode ?? ''));
}

/** One line for a listed program: its state, its command (quoted by the caller), and whether it is sandboxed. */
export function programLine(p: ProgramEntry, cmd: string): string {
  return `${programText({ id: String(p.programId), state: String(p.state), exitCode: p.exitCode })} · ${cmd} · ${p.sandboxed ? l10n.t('sandboxed') : l10n.t('not sandboxed')}`;
}
