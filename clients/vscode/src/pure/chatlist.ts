// Several chats open at once: the list the chat view shows (newest first, the running ones and
// those waiting for a permission answer marked), and the routing of agentd's updates to the chat
// whose session they belong to, holding back those that come before the chat knows its session.
import { ChatState } from './viewmodel';

/** One open chat, as the extension host keeps it. */
export interface OpenChat { id: string; created: number; state: ChatState }

/** One row of the chat list the webview draws. */
export interface ChatListEntry {
  id: string;
  title: string;
  running: boolean;
  /** A permission request waits for an answer in this chat. */
  waiting: boolean;
  /** The chat this webview shows. */
  current: boolean;
}

const TITLE_MAX = 60;

/** A chat's name: agentd's title (session_info_update), else its first prompt, else "" (the UI says "New chat"). */
export function chatTitle(s: ChatState): string {
  const t = (s.title ?? '').replace(/\s+/g, ' ').trim();
  if (t) return clip(t);
  const first = s.items.find((it) => it.kind === 'user');
  const p = first && first.kind === 'user' ? first.text.replace(/\s+/g, ' ').trim() : '';
  return p ? clip(p) : '';
}

function clip(s: string): string {
  return s.length > TITLE_MAX ? `${s.slice(0, TITLE_MAX - 1)}…` : s;
}

/** Whether a permission request in the chat still waits for its answer. */
export function waiting(s: ChatState): boolean {
  return s.items.some((it) => it.kind === 'permission' && !it.answer);
}

/** The chat list for a webview showing chat `currentId`: newest first. */
export function chatList(chats: OpenChat[], currentId: string | undefined): ChatListEntry[] {
  return [...chats].sort((a, b) => b.created - a.created).map((c) => ({
    id: c.id, title: chatTitle(c.state), running: c.state.running, waiting: waiting(c.state), current: c.id === currentId,
  }));
}

/** A chat with nothing in it yet: "New chat" reuses it rather than opening another. */
export function isBlank(s: ChatState): boolean {
  return !s.running && !s.items.some((it) => it.kind !== 'notice') && !s.queued.length;
}

/** The chat to show once chat `closed` is gone: the next older one, else the next newer one. */
export function afterClose(chats: OpenChat[], closed: string): string | undefined {
  const list = [...chats].sort((a, b) => b.created - a.created);
  const i = list.findIndex((c) => c.id === closed);
  if (i < 0) return list[0]?.id;
  return (list[i + 1] ?? list[i - 1])?.id;
}

/** The open chat whose agentd session is `sessionId`. */
export function chatOfSession<C extends { state: ChatState }>(chats: C[], sessionId: string | undefined): C | undefined {
  if (!sessionId) return undefined;
  return chats.find((c) => c.state.sessionId === sessionId);
}

/**
 * Updates for sessions no open chat holds yet: agentd may send a new or loaded session's first
 * updates before its answer names the session. They wait here until a chat takes the session
 * (take), within bounds: a session nobody takes is forgotten, oldest first.
 */
export class HeldUpdates<U> {
  private readonly held = new Map<string, U[]>();
  constructor(private readonly maxSessions = 16, private readonly maxPerSession = 500) {}

  hold(sessionId: string, update: U) {
    let q = this.held.get(sessionId);
    if (!q) {
      if (this.held.size >= this.maxSessions) this.held.delete(this.held.keys().next().value!);
      q = [];
      this.held.set(sessionId, q);
    }
    if (q.length < this.maxPerSession) q.push(update);
  }

  /** The updates held for `sessionId`, in the order they came; they are no longer held. */
  take(sessionId: string): U[] {
    const q = this.held.get(sessionId) ?? [];
    this.held.delete(sessionId);
    return q;
  }

  get size(): number { return this.held.size; }
}

/** A saved chat of `agent/session/list`, as the history shows it. */
export interface SavedChat { sessionId: string; title?: string; updatedAt?: string }

/**
 * The chat history's rows: the well-formed entries of `agent/session/list`, each with the name the
 * user gave it (`names`, by session id) over agentd's title, those matching `query` (every word
 * of it in the name or the id, any case), newest first.
 */
export function historyRows(sessions: unknown, names: Record<string, string>, query = ''): SavedChat[] {
  if (!Array.isArray(sessions)) return [];
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  return sessions
    .filter((s: any) => typeof s?.sessionId === 'string')
    .map((s: any) => ({
      sessionId: s.sessionId as string,
      title: (typeof names[s.sessionId] === 'string' && names[s.sessionId]) || (typeof s.title === 'string' ? s.title : undefined),
      updatedAt: typeof s.updatedAt === 'string' ? s.updatedAt : undefined,
    }))
    .filter((s) => words.every((w) => `${s.title ?? ''} ${s.sessionId}`.toLowerCase().includes(w)))
    .sort((a, b) => (b.updatedAt ?? '').localeCompare(a.updatedAt ?? ''));
}
