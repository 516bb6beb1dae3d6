// The chats open at once, each its own agentd session: created, closed, and fed agentd's
// updates by session id (those that come before their chat knows its session wait for it).
import * as vscode from 'vscode';
import { Chat } from './chat';
import { Daemon } from './daemon';
import { SessionUpdateParams } from './pure/protocol';
import { chatList, ChatListEntry, chatOfSession, HeldUpdates } from './pure/chatlist';
import { Event } from './pure/viewmodel';
import { Review } from './review';

/** The events that can change a chat's row in the list (its title, running or waiting mark). */
const LISTED: ReadonlySet<Event['type']> = new Set(['reset', 'session', 'promptSent', 'turnEnded', 'permissionAsked', 'permissionAnswered', 'daemon', 'dropTurn']);

export class Chats implements vscode.Disposable {
  private readonly open: Chat[] = [];
  private readonly subs = new Map<Chat, vscode.Disposable>();
  private readonly held = new HeldUpdates<SessionUpdateParams>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** A chat was opened or closed, or its title, running or waiting mark may have changed. */
  readonly onDidChange = this.changed.event;
  private count = 0;
  /** Called when a chat's turn is cancelled, so its pending permission requests answer `cancelled`. */
  onCancelled: (sessionId: string) => void = () => undefined;

  constructor(private readonly daemon: Daemon, private readonly review: Review) {}

  get all(): readonly Chat[] { return this.open; }

  create(): Chat {
    const n = ++this.count;
    const chat = new Chat(this.daemon, `chat-${n}`, n);
    chat.review = this.review;
    chat.onCancelled = (sessionId) => this.onCancelled(sessionId);
    this.subs.set(chat, chat.onEvent((e) => {
      // After this event reached every listener (the webviews too), so the held updates follow it.
      if ((e.type === 'reset' || e.type === 'session') && e.sessionId) {
        const sessionId = e.sessionId;
        queueMicrotask(() => this.release(chat, sessionId));
      }
      if (LISTED.has(e.type) || (e.type === 'update' && e.update?.sessionUpdate === 'session_info_update')) this.changed.fire();
    }));
    this.open.push(chat);
    this.changed.fire();
    return chat;
  }

  private release(chat: Chat, sessionId: string) {
    for (const p of this.held.take(sessionId)) {
      if (chat.state.sessionId === sessionId) chat.dispatch({ type: 'update', sessionId, update: p.update ?? {} });
    }
  }

  byId(id: unknown): Chat | undefined { return this.open.find((c) => c.id === id); }
  bySession(sessionId: string | undefined): Chat | undefined { return chatOfSession(this.open, sessionId); }

  /** An `agent/session/update`: to the chat holding its session, or held until one does. */
  route(p: SessionUpdateParams) {
    const sessionId = typeof p?.sessionId === 'string' ? p.sessionId : undefined;
    if (!sessionId) return;
    const chat = this.bySession(sessionId);
    if (chat) chat.dispatch({ type: 'update', sessionId, update: p.update ?? {} });
    else this.held.hold(sessionId, p);
  }

  /** An event of the chat holding `sessionId` (a permission request and its answer). */
  dispatchTo(sessionId: string, e: Event) {
    this.bySession(sessionId)?.dispatch(e);
  }

  /** The list a webview showing `current` draws. */
  list(current: Chat | undefined): ChatListEntry[] {
    return chatList(this.open, current?.id);
  }

  get running(): boolean { return this.open.some((c) => c.state.running); }

  /** Closes a chat: its turn stops, agentd frees its session; it stays in the history. */
  close(chat: Chat) {
    const i = this.open.indexOf(chat);
    if (i < 0) return;
    chat.closeChat();
    this.open.splice(i, 1);
    this.subs.get(chat)?.dispose();
    this.subs.delete(chat);
    chat.dispose();
    this.changed.fire();
  }

  /** agentd (re)started: every chat resumes its session; a chat on screen without one gets one. */
  async onDaemonReady(restarted: boolean, onScreen: (c: Chat) => boolean) {
    await Promise.all(this.open.map((c) => c.onDaemonReady(restarted, onScreen(c))));
  }

  dispose() {
    for (const c of [...this.open]) { this.subs.get(c)?.dispose(); c.dispose(); }
    this.open.length = 0;
    this.changed.dispose();
  }
}
