// Requests made while agentd is starting (activation has returned but the language client is
// still loading, or agentd has not answered initialize yet) wait until it is ready, instead of
// failing with "not running"; they fail with the reason as soon as agentd stops or cannot start.
import * as l10n from '@vscode/l10n';
import type { DaemonStatus } from './viewmodel';

/** The part of VS Code's CancellationToken the wait uses. */
export interface Cancellation {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

/** The error a wait cancelled by its token rejects with: JSON-RPC's RequestCancelled, as the language client's. */
export class WaitCancelled extends Error {
  readonly code = -32800;
  constructor() { super('cancelled while waiting for agentd to start'); }
}

type Waiter = { resolve: () => void; reject: (e: Error) => void };

export class ReadyGate {
  private status: DaemonStatus = 'starting';
  private message: string | undefined;
  private readonly waiters = new Set<Waiter>();

  /** Follows agentd's state: `ready` lets the waiting requests go, `stopped` and `error` fail them. */
  set(status: DaemonStatus, message?: string) {
    this.status = status;
    this.message = message;
    if (status === 'starting') return;
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const w of waiting) {
      if (status === 'ready') w.resolve();
      else w.reject(this.notRunning());
    }
  }

  /** Resolves when agentd is ready: at once, or once it has started; rejects when it is not running. */
  wait(token?: Cancellation): Promise<void> {
    if (this.status === 'ready') return Promise.resolve();
    if (this.status !== 'starting') return Promise.reject(this.notRunning());
    if (token?.isCancellationRequested) return Promise.reject(new WaitCancelled());
    return new Promise<void>((resolve, reject) => {
      let sub: { dispose(): void } | undefined;
      const w: Waiter = {
        resolve: () => { sub?.dispose(); resolve(); },
        reject: (e) => { sub?.dispose(); reject(e); },
      };
      this.waiters.add(w);
      sub = token?.onCancellationRequested(() => {
        if (this.waiters.delete(w)) w.reject(new WaitCancelled());
      });
    });
  }

  /** How many requests are waiting (for the tests). */
  get waiting(): number { return this.waiters.size; }

  private notRunning(): Error {
    return new Error(this.message ?? l10n.t('agentd is not running.'));
  }
}
