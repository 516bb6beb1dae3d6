// The chat view's script. It reduces the host's events with the shared reducer and renders
// them: streamed Markdown revealed token by token, highlighted code, collapsible thinking,
// one status row per tool call, permission cards, plan, usage meter, queue, mode and model.
// Every string it shows goes through l10n.t (src/pure/l10n.ts says how; ./l10n loads the bundle).
import './l10n';
import * as l10n from '@vscode/l10n';
import {
  buttonLabel, buttonsFor, ChatState, ConfigOption, denyWithFeedbackLabel, Event, feedbackOption, initialState, Item, optionValues, reduce, slashMatches, usageText, costText, Diff, stdinSize,
} from '../src/pure/viewmodel';
import { diffRows } from '../src/pure/hunks';
import { addChip, applyMention, blocksOf, Chip, mentionAt } from '../src/pure/mentions';
import { ChatListEntry, historyRows } from '../src/pure/chatlist';
import { esc, Op, revealTo, StreamMarkdown } from '../src/pure/markdown';
import { droppedUris } from '../src/pure/drop';
import { programText, ProgramState, sandboxText, SandboxInfo } from '../src/pure/sandbox';
import { Follow } from '../src/pure/follow';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void; setState(s: unknown): void };
const vscode = acquireVsCodeApi();

let state: ChatState = initialState();
/** The open chat this webview shows, the list of them, and the unsent input of each other one. */
let chatId = '';
let chats: ChatListEntry[] = [];
const drafts = new Map<string, string>();
let sessions: any[] | null = null;
let sessionsError = '';
const revealed = new Map<number, number>(); // item index -> characters revealed so far
const rendered = new Map<number, { el: HTMLElement; key: string; live?: LiveMarkdown }>();

// ---------- skeleton
const app = document.getElementById('app')!;
app.innerHTML = `
<header class="toolbar">
  <div class="modes" role="radiogroup" aria-label="${esc(l10n.t('Mode'))}"></div>
  <span class="spacer"></span>
  <button class="icon-btn" data-act="history" title="${esc(l10n.t('Chat history'))}" aria-label="${esc(l10n.t('Chat history'))}"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><circle cx="8" cy="8" r="6"/><path d="M8 4.5V8l2.5 1.5"/></svg></button>
  <button class="icon-btn" data-act="cmd" data-command="agentd.fork" title="${esc(l10n.t('Fork conversation: continue in a copy, the original stays as it is'))}" aria-label="${esc(l10n.t('Fork conversation'))}"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><circle cx="4.5" cy="3.5" r="1.5"/><circle cx="11.5" cy="3.5" r="1.5"/><circle cx="8" cy="12.5" r="1.5"/><path d="M4.5 5v1.5c0 1.5 1 2.5 3.5 2.5s3.5-1 3.5-2.5V5M8 9v2"/></svg></button>
  <button class="icon-btn" data-act="open-editor" title="${esc(l10n.t('Open chat in editor'))}" aria-label="${esc(l10n.t('Open chat in editor'))}"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><rect x="2" y="3" width="12" height="10" rx="1"/><path d="M2 6h12M9 6v7"/></svg></button>
  <button class="icon-btn" data-act="new" title="${esc(l10n.t('New chat'))}" aria-label="${esc(l10n.t('New chat'))}"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M8 3v10M3 8h10"/></svg></button>
  <button class="icon-btn" data-act="provider" title="${esc(l10n.t('Configure provider'))}" aria-label="${esc(l10n.t('Configure provider'))}"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M2 4h7M12 4h2M2 8h2M7 8h7M2 12h8M13 12h1"/><circle cx="10.5" cy="4" r="1.5"/><circle cx="5.5" cy="8" r="1.5"/><circle cx="11.5" cy="12" r="1.5"/></svg></button>
</header>
<div class="banner" hidden></div>
<nav class="chatlist" aria-label="${esc(l10n.t('Open chats'))}" hidden></nav>
<div class="history" hidden></div>
<main class="messages" aria-label="${esc(l10n.t('Conversation'))}"></main>
<div class="sr-only announcer" role="status" aria-live="polite" aria-atomic="true"></div>
<section class="plan" hidden></section>
<section class="queued" hidden></section>
<footer class="composer">
  <div class="meter" hidden><div class="meter-bar"><div class="meter-fill"></div></div><span class="meter-text"></span><span class="meter-cost" hidden></span><button class="link-btn compact" data-act="compact" title="${esc(l10n.t('Summarise the earlier conversation to free context (/compact)'))}">${esc(l10n.t('Compact'))}</button></div>
  <div class="slash-menu" role="listbox" aria-label="${esc(l10n.t('Commands'))}" hidden></div>
  <div class="mention-menu" role="listbox" aria-label="${esc(l10n.t('Files and symbols'))}" hidden></div>
  <div class="chips" aria-label="${esc(l10n.t('Context sent with the prompt'))}"></div>
  <textarea class="input" rows="3" placeholder="${esc(l10n.t('Ask agentd… (Enter to send, Shift+Enter for a new line, / for commands)'))}" aria-label="${esc(l10n.t('Prompt'))}"></textarea>
  <div class="actions">
    <select class="model" aria-label="${esc(l10n.t('Model'))}" title="${esc(l10n.t('Model'))}"></select>
    <span class="state-text"></span>
    <button class="stop secondary" hidden>${esc(l10n.t('Stop'))}</button>
    <button class="queue secondary" hidden title="${esc(l10n.t('Send after the current turn ends'))}">${esc(l10n.t('Queue'))}</button>
    <button class="send">${esc(l10n.t('Send'))}</button>
  </div>
</footer>`;
const $ = <T extends HTMLElement>(sel: string) => app.querySelector(sel) as T;
const messages = $('.messages');
const input = $<HTMLTextAreaElement>('.input');

// ---------- the transcript keeps its end in sight until the user scrolls up (src/pure/follow.ts);
// a size the browser corrects after a frame (content-visibility's estimate for an item not laid
// out yet, a thought folding) is followed too: the ResizeObserver runs after layout, before paint.
const follow = new Follow();
const box = () => ({ top: messages.scrollTop, height: messages.scrollHeight, client: messages.clientHeight });
// The webview's own scroll is told by its position alone: no layout is read for it.
messages.addEventListener('scroll', () => { if (!follow.own(messages.scrollTop)) follow.scrolled(box()); }, { passive: true });
function keepEnd() {
  const t = follow.target(box());
  if (t === undefined) return;
  messages.scrollTop = t;
  follow.scrolledTo(messages.scrollTop);
}
const resized = new ResizeObserver(keepEnd);
resized.observe(messages);
/** Puts an item's element in the transcript (in place of `old`), its size watched. */
function place(el: HTMLElement, old?: HTMLElement) {
  if (old) { resized.unobserve(old); old.replaceWith(el); } else messages.appendChild(el);
  resized.observe(el);
}
/** Empties the transcript. */
function clearMessages() {
  for (const r of rendered.values()) resized.unobserve(r.el);
  messages.innerHTML = '';
  rendered.clear();
}

// While a turn runs, Send steers it (the message joins the running turn at its next step) and
// Queue sends it as the next prompt instead.
function send(how: 'default' | 'queue' = 'default') {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  closeSlash();
  closeMentions();
  // A / command is a prompt of its own (agentd runs it or expands it), so it waits its turn.
  const steer = state.running && how === 'default' && !text.startsWith('/');
  // Chips go with a prompt; a steer is text only, so they wait for the next prompt.
  vscode.postMessage(steer ? { type: 'steer', text } : { type: 'prompt', text, context: blocksOf(pinned) });
  if (!steer) { pinned = []; renderChips(); }
}
$('.send').addEventListener('click', () => send());
$('.queue').addEventListener('click', () => send('queue'));
$('.stop').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
// Esc anywhere in the chat stops the running turn, unless something nearer used it (the @ and
// / lists close on Esc and mark it handled) or the chat history is open (Esc closes that).
document.addEventListener('keydown', (e) => {
  if (e.key !== 'Escape' || e.defaultPrevented || e.isComposing) return;
  const h = $('.history');
  if (!h.hidden) { h.hidden = true; e.preventDefault(); return; }
  if (!state.running) return;
  e.preventDefault();
  vscode.postMessage({ type: 'cancel' });
});

// ---------- context chips (active file, selection, mentions) and @/# completion
let pinned: Chip[] = [];
let editorCtx: { file: Chip | null; selection: Chip | null } = { file: null, selection: null };
const chipsEl = $('.chips');
function chipHtml(c: Chip, on: boolean): string {
  // Plain text marks: the webview's fonts may have no emoji.
  const icon = c.kind === 'symbol' ? '#' : c.kind === 'selection' ? '§' : c.kind === 'image' ? '▣' : c.kind === 'mcp' ? '⧉' : '@';
  return on
    ? `<span class="chip on" data-kind="${c.kind}" title="${esc(c.id)}">${icon} ${esc(c.label)}<button class="chip-x" data-chip-remove="${esc(c.id)}" aria-label="${esc(l10n.t('Remove {0}', c.label))}">×</button></span>`
    : `<button class="chip off" data-kind="${c.kind}" data-chip-add="${esc(c.id)}" title="${esc(l10n.t('Add to the prompt: {0}', c.id))}">+ ${icon} ${esc(c.label)}</button>`;
}
function renderChips() {
  const offers = [editorCtx.selection, editorCtx.file].filter((c): c is Chip => !!c && !pinned.some((p) => p.id === c.id));
  chipsEl.innerHTML = pinned.map((c) => chipHtml(c, true)).join('') + offers.map((c) => chipHtml(c, false)).join('');
  chipsEl.hidden = !pinned.length && !offers.length;
}
chipsEl.addEventListener('click', (e) => {
  const t = (e.target as HTMLElement).closest('[data-chip-add], [data-chip-remove]') as HTMLElement | null;
  if (!t) return;
  if (t.dataset.chipRemove) pinned = pinned.filter((c) => c.id !== t.dataset.chipRemove);
  else {
    const c = [editorCtx.selection, editorCtx.file].find((x) => x?.id === t.dataset.chipAdd);
    if (c) pinned = addChip(pinned, c);
  }
  renderChips();
  input.focus();
});

// Files dropped on the chat (Shift while dragging from the explorer or the desktop, where VS
// Code lets a webview take the drop) become chips: the extension reads what they are.
app.addEventListener('dragover', (e) => {
  if (!e.dataTransfer || ![...e.dataTransfer.types].some((t) => t === 'text/uri-list' || t === 'application/vnd.code.uri-list' || t === 'Files')) return;
  e.preventDefault();
  e.dataTransfer.dropEffect = 'copy';
});
app.addEventListener('drop', (e) => {
  const dt = e.dataTransfer;
  if (!dt) return;
  const list = dt.getData('application/vnd.code.uri-list') || dt.getData('text/uri-list');
  const uris = droppedUris(list);
  if (!uris.length) return;
  e.preventDefault();
  vscode.postMessage({ type: 'drop', uris });
  input.focus();
});

const mentionMenu = $('.mention-menu');
let mentionItems: Array<{ chip: Chip; detail: string }> = [];
let mentionIndex = 0;
let mentionToken = 0;
function closeMentions() { mentionItems = []; mentionMenu.hidden = true; mentionToken++; }
function queryMentions() {
  const m = mentionAt(input.value, input.selectionStart ?? input.value.length);
  if (!m) { closeMentions(); return; }
  vscode.postMessage({ type: 'mentionQuery', query: m.query, sigil: m.sigil, token: ++mentionToken });
}
function renderMentions() {
  if (!mentionItems.length) { mentionMenu.hidden = true; return; }
  mentionIndex = Math.min(mentionIndex, mentionItems.length - 1);
  mentionMenu.innerHTML = mentionItems.map((x, k) => `<div class="mention-item${k === mentionIndex ? ' on' : ''}" role="option" aria-selected="${k === mentionIndex}" data-mention="${k}"><span class="mention-name">${esc(x.chip.label)}</span><span class="mention-desc">${esc(x.detail)}</span></div>`).join('');
  mentionMenu.hidden = false;
}
function acceptMention(k: number) {
  const x = mentionItems[k];
  if (!x) return;
  const r = applyMention(input.value, input.selectionStart ?? input.value.length, x.chip.label);
  if (r) { input.value = r.text; input.setSelectionRange(r.caret, r.caret); }
  pinned = addChip(pinned, x.chip);
  closeMentions();
  renderChips();
  input.focus();
}
input.addEventListener('input', queryMentions);
mentionMenu.addEventListener('mousedown', (e) => {
  const el = (e.target as HTMLElement).closest('[data-mention]') as HTMLElement | null;
  if (el) { e.preventDefault(); acceptMention(Number(el.dataset.mention)); }
});
input.addEventListener('blur', () => setTimeout(() => { if (document.activeElement !== input) closeMentions(); }, 150));
// Registered before the "/" handler: while the mention list is open it owns the arrow keys.
input.addEventListener('keydown', (e) => {
  if (!mentionItems.length || mentionMenu.hidden) return;
  if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
    mentionIndex = (mentionIndex + (e.key === 'ArrowDown' ? 1 : mentionItems.length - 1)) % mentionItems.length;
    renderMentions();
  } else if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && !e.isComposing)) acceptMention(mentionIndex);
  else if (e.key === 'Escape') closeMentions();
  else return;
  e.preventDefault();
  e.stopImmediatePropagation();
});

// ---------- "/" completion from available_commands_update
const slashMenu = $('.slash-menu');
let slashItems: ChatState['commands'] = [];
let slashIndex = 0;
function closeSlash() { slashItems = []; slashMenu.hidden = true; }
function renderSlash() {
  slashItems = input.selectionStart === input.value.length ? slashMatches(state.commands, input.value) : [];
  if (!slashItems.length) { slashMenu.hidden = true; return; }
  slashIndex = Math.min(slashIndex, slashItems.length - 1);
  slashMenu.innerHTML = slashItems.map((c, k) => `<div class="slash-item${k === slashIndex ? ' on' : ''}" role="option" aria-selected="${k === slashIndex}" data-slash="${k}"><span class="slash-name">/${esc(c.name.replace(/^\//, ''))}</span>${c.description ? `<span class="slash-desc">${esc(c.description)}</span>` : ''}</div>`).join('');
  slashMenu.hidden = false;
}
function acceptSlash(k: number) {
  const c = slashItems[k];
  if (!c) return;
  input.value = `/${c.name.replace(/^\//, '')} `;
  input.focus();
  input.setSelectionRange(input.value.length, input.value.length);
  closeSlash();
}
input.addEventListener('input', () => { slashIndex = 0; renderSlash(); });
input.addEventListener('blur', () => setTimeout(closeSlash, 150));
slashMenu.addEventListener('mousedown', (e) => {
  const el = (e.target as HTMLElement).closest('[data-slash]') as HTMLElement | null;
  if (el) { e.preventDefault(); acceptSlash(Number(el.dataset.slash)); }
});
input.addEventListener('keydown', (e) => {
  if (slashItems.length && !slashMenu.hidden) {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      slashIndex = (slashIndex + (e.key === 'ArrowDown' ? 1 : slashItems.length - 1)) % slashItems.length;
      renderSlash();
      return;
    }
    if (e.key === 'Tab' || (e.key === 'Enter' && !e.shiftKey && !e.isComposing)) { e.preventDefault(); acceptSlash(slashIndex); return; }
    if (e.key === 'Escape') { e.preventDefault(); closeSlash(); return; }
  }
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) { e.preventDefault(); send(); }
});
// A thought block is open while it streams and closed once finished, unless the user chose.
const thoughtChoice = new Map<string, boolean>();
app.addEventListener('click', (e) => {
  const sum = (e.target as HTMLElement).closest('details.thought > summary');
  const det = sum?.parentElement as HTMLDetailsElement | undefined;
  if (det?.dataset.id) thoughtChoice.set(det.dataset.id, !det.open);
});
app.addEventListener('click', (e) => {
  const t = (e.target as HTMLElement).closest('button, [data-session], a') as HTMLElement | null;
  if (!t) return;
  const act = t.dataset.act;
  if (act === 'history') {
    const h = $('.history');
    if (!h.hidden) { h.hidden = true; return; }
    sessions = null; sessionsError = '';
    renderHistory();
    h.hidden = false;
    (h.querySelector('.history-search') as HTMLInputElement | null)?.focus();
    vscode.postMessage({ type: 'listSessions' });
  } else if (act === 'rename-session') {
    vscode.postMessage({ type: 'renameSession', sessionId: t.dataset.sid, title: t.dataset.title });
  } else if (act === 'delete-session') {
    vscode.postMessage({ type: 'deleteSession', sessionId: t.dataset.sid, title: t.dataset.title });
  } else if (act === 'switch-chat') {
    if (t.dataset.chat !== chatId) vscode.postMessage({ type: 'switchChat', chatId: t.dataset.chat });
  } else if (act === 'close-chat') {
    vscode.postMessage({ type: 'closeChat', chatId: t.dataset.chat });
  } else if (act === 'open-editor') {
    vscode.postMessage({ type: 'openInEditor' });
  } else if (act === 'new') {
    $('.history').hidden = true;
    vscode.postMessage({ type: 'newChat' });
  } else if (act === 'provider') {
    vscode.postMessage({ type: 'command', command: 'agentd.configureProvider' });
  } else if (act === 'logs') {
    vscode.postMessage({ type: 'command', command: 'agentd.showLogs' });
  } else if (act === 'restart') {
    vscode.postMessage({ type: 'command', command: 'agentd.restart' });
  } else if (act === 'mode') {
    vscode.postMessage({ type: 'setConfig', configId: t.dataset.config, value: t.dataset.value });
  } else if ((act === 'perm' || act === 'perm-feedback') && !armedPermissions.has(t.dataset.req ?? '')) {
    // Not armed yet (see ARM_MS): an early click answers nothing.
  } else if (act === 'perm') {
    vscode.postMessage({ type: 'permission', requestId: t.dataset.req, button: t.dataset.button });
    // The card's buttons go away with the answer: the keyboard goes back to the input rather
    // than to the page's body.
    input.focus();
  } else if (act === 'restore') {
    vscode.postMessage({ type: 'restoreCheckpoint', checkpointId: t.dataset.checkpoint });
  } else if (act === 'change') {
    vscode.postMessage({ type: 'openChange', path: t.dataset.path });
  } else if (act === 'stop-program') {
    vscode.postMessage({ type: 'stopProgram', programId: t.dataset.program });
  } else if (act === 'cmd') {
    vscode.postMessage({ type: 'command', command: t.dataset.command });
  } else if (act === 'perm-feedback') {
    vscode.postMessage({ type: 'denyWithFeedback', requestId: t.dataset.req });
  } else if (act === 'diff') {
    vscode.postMessage({ type: 'openDiff', index: Number(t.dataset.index), diff: Number(t.dataset.diff) });
  } else if (t.dataset.session) {
    $('.history').hidden = true;
    vscode.postMessage({ type: 'loadSession', sessionId: t.dataset.session, title: t.dataset.title });
  } else if (act === 'compact') {
    vscode.postMessage({ type: 'prompt', text: '/compact' });
  } else if (t.dataset.codeAct) {
    const code = t.closest('.code')?.querySelector('code')?.textContent ?? '';
    vscode.postMessage({ type: 'code', action: t.dataset.codeAct, code });
  } else if (t.hasAttribute('data-copy')) {
    const code = t.closest('.code')?.querySelector('code')?.textContent ?? '';
    void navigator.clipboard?.writeText(code).catch(() => undefined);
  }
});
$<HTMLSelectElement>('.model').addEventListener('change', (e) => {
  const sel = e.target as HTMLSelectElement;
  vscode.postMessage({ type: 'setConfig', configId: sel.dataset.config, value: sel.value });
});

// ---------- rendering
const STATUS_ICON: Record<string, string> = { pending: '○', in_progress: '◐', completed: '✓', failed: '✗' };
function statusText(status: string): string {
  switch (status) {
    case 'pending': return l10n.t('pending');
    case 'in_progress': return l10n.t('running');
    case 'completed': return l10n.t('done');
    case 'failed': return l10n.t('failed');
    default: return status;
  }
}

function shortPath(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts.slice(-2).join('/');
}

/** One "Open diff" button per file change of transcript item `index`. */
function diffButtons(index: number, diffs: Diff[]): string {
  return diffs.map((d, k) => `<button class="link-btn" data-act="diff" data-index="${index}" data-diff="${k}" title="${esc(l10n.t('Open in the diff editor'))}">${esc(l10n.t('Open diff: {0}', shortPath(d.path)))}</button>`).join('');
}

/** A compact line diff: common head and tail trimmed, the rest as removed/added lines. */
// The card's diff: the real hunks (pure/hunks.ts diffRows), each with a line of context and a
// gap row between them, not everything between the first and the last change.
function miniDiff(d: Diff): string {
  const { rows, hidden } = diffRows(d.oldText ?? '', d.newText, 1, 80);
  const sign = { ctx: '  ', del: '- ', add: '+ ' } as const;
  const lines = rows.map((r) => (r.kind === 'gap'
    ? '<div class="gap" aria-hidden="true">⋯</div>'
    : `<div class="${r.kind}">${sign[r.kind]}${esc(r.text)}</div>`));
  if (hidden) lines.push(`<div class="gap">${esc(l10n.t('{0} more changed lines; open the diff to see them all', hidden))}</div>`);
  return `<div class="minidiff"><div class="minidiff-head">${esc(d.oldText === null ? l10n.t('{0} (new file)', shortPath(d.path)) : shortPath(d.path))}</div>${lines.join('')}</div>`;
}

function itemHtml(it: Item, index: number): string {
  switch (it.kind) {
    case 'user':
      return `<div class="msg user" role="article" aria-label="${esc(l10n.t('You'))}"${it.checkpointId ? ` data-checkpoint="${esc(it.checkpointId)}"` : ''}><div class="bubble">${esc(it.text).replace(/\n/g, '<br>')}</div>${it.checkpointId ? `<div class="checkpoint"><span class="checkpoint-line" aria-hidden="true"></span><button class="link-btn" data-act="restore" data-checkpoint="${esc(it.checkpointId)}" title="${esc(l10n.t('Put the files, the conversation or both back to how they were before this prompt'))}">${esc(l10n.t('Restore checkpoint'))}</button></div>` : ''}</div>`;
    case 'agent':
      // An empty frame: LiveMarkdown renders the reply into it as it grows (renderLive).
      return `<div class="msg agent" role="article" aria-label="${esc(l10n.t('agentd'))}"><div class="md"></div></div>`;
    case 'thought':
      return `<details class="thought" data-id="${esc(it.id)}" aria-label="${esc(l10n.t("agentd's thinking"))}"><summary><span class="shimmer"></span></summary><div class="md"></div></details>`;
    case 'tool': {
      const diffs = diffButtons(index, it.diffs);
      // A running program's output shows as it comes (the tail, open); a finished one folds.
      const live = it.status === 'in_progress' || it.status === 'pending';
      const out = it.output ? `<details class="tool-out${live ? ' live' : ''}"${live ? ' open' : ''}><summary>${esc(live ? l10n.t('output (live)') : l10n.t('output'))}</summary><pre>${esc(live ? it.output.slice(-20000) : it.output.slice(0, 20000))}</pre></details>` : '';
      return `<div class="tool status-${it.status}${it.parent ? ' nested' : ''}" data-tool-status="${esc(statusText(it.status))}"><div class="tool-row"><span class="tool-icon" aria-hidden="true">${STATUS_ICON[it.status] ?? '•'}</span>${it.server ? `<span class="tool-server" title="${esc(l10n.t('From the MCP server {0}', it.server))}">${esc(it.server)}</span>` : ''}<span class="tool-title">${esc(it.title || it.toolKind || l10n.t('tool'))}</span>${toolSandbox(it)}<span class="tool-status">${esc(statusText(it.status))}</span></div>${diffs ? `<div class="tool-diffs">${diffs}</div>` : ''}${out}</div>`;
    }
    case 'changes': {
      const sign = (n: number, c: string) => `<span class="${c}">${c === 'added' ? '+' : '−'}${n}</span>`;
      // Which files are still under review (the extension says; until it has, all of them).
      const open = reviewOpen.get(it.id);
      const underReview = (p: string) => !open || open.includes(p);
      const rows = it.files.map((f) => `<li class="change" data-path="${esc(f.path)}"><span class="change-file" title="${esc(f.path)}">${esc(shortPath(f.path))}</span><span class="change-kind">${esc(changeText(f.change, f.from ? shortPath(f.from) : undefined))}</span>${sign(f.added, 'added')} ${sign(f.removed, 'removed')}${underReview(f.path) ? '' : ` <span class="reviewed">${esc(l10n.t('reviewed'))}</span>`}${f.change === 'deleted' ? '' : `<button class="link-btn" data-act="change" data-path="${esc(f.path)}" title="${esc(l10n.t("Open the file's changes in the diff editor"))}">${esc(l10n.t('Open diff'))}</button>`}</li>`).join('');
      const n = it.files.length;
      const actions = it.files.some((f) => underReview(f.path))
        ? `<button class="secondary" data-act="cmd" data-command="agentd.keepAll" title="${esc(l10n.t('Keep every change still under review'))}">${esc(l10n.t('Keep All'))}</button><button class="secondary" data-act="cmd" data-command="agentd.undoAll" title="${esc(l10n.t('Undo every change still under review'))}">${esc(l10n.t('Undo All'))}</button>`
        : `<span class="muted reviewed-all">${esc(l10n.t('All reviewed'))}</span>`;
      return `<div class="changes"><div class="changes-head"><span class="section-title">${esc(l10n.t('Changes'))}</span><span class="muted">${esc(n === 1 ? l10n.t('1 file') : l10n.t('{0} files', n))}</span><span class="spacer"></span>${actions}</div><ul>${rows}</ul></div>`;
    }
    case 'notice':
      return `<div class="notice ${it.severity}" role="note"><strong>${esc(it.title)}</strong>${it.description ? `<div>${esc(it.description)}</div>` : ''}</div>`;
    case 'permission': {
      const saves = it.saves?.length
        ? `<div class="saves"><div>${esc(l10n.t('Saves first:'))}</div><ul>${it.saves.map((f) => `<li data-user-changes="${f.userChanges}"><code>${esc(f.path)}</code>${f.userChanges ? ` <span class="user-changes">${esc(l10n.t('(with your unsaved changes)'))}</span>` : ''}</li>`).join('')}</ul></div>`
        : '';
      // What the program or server gets besides its argv is part of what is granted: shown whole.
      const pairs = (cls: string, title: string, list: { name: string; value: string }[] | undefined, sep: string) => list?.length
        ? `<div class="${cls}"><div>${esc(title)}</div><ul>${list.map((p) => `<li><code>${esc(p.name)}${sep}${esc(p.value)}</code></li>`).join('')}</ul></div>`
        : '';
      const stdin = it.stdin
        ? `<div class="perm-stdin"><div>${esc(stdinSize(it.stdin))}${it.stdin.truncated ? ` ${esc(l10n.t('(the start of it)'))}` : ''}</div>${it.stdin.bytes ? `<pre>${esc(it.stdin.preview)}</pre>` : ''}</div>`
        : '';
      const extras = pairs('perm-env', l10n.t('Environment:'), it.env, '=') + pairs('perm-headers', l10n.t('Headers:'), it.headers, ': ') + stdin;
      const body = it.command
        ? `<div class="cmd"><code>${esc(it.command)}</code>${it.cwd ? `<div class="cwd">${esc(l10n.t('in {0}', it.cwd))}</div>` : ''}</div>${extras}${saves}`
        : it.diffs.map(miniDiff).join('') + extras + saves;
      const diffBtns = diffButtons(index, it.diffs);
      const buttons = it.answer
        ? `<div class="answered">${esc(answerText(it.answer))}${it.feedback ? `: <q class="feedback">${esc(it.feedback)}</q>` : ''}</div>`
        : `<div class="perm-buttons">${buttonsFor(it.options).map((b, k) => `<button class="${k === 0 ? '' : 'secondary'}" data-act="perm" data-req="${esc(it.id)}" data-button="${esc(b)}"${armedPermissions.has(it.id) ? '' : ARMING_ATTRS}>${esc(buttonLabel(b))}</button>`).join('')}${feedbackOption(it.options) ? `<button class="secondary" data-act="perm-feedback" data-req="${esc(it.id)}" title="${esc(l10n.t('Deny, and tell agentd what to do instead'))}"${armedPermissions.has(it.id) ? '' : ARMING_ATTRS}>${esc(denyWithFeedbackLabel())}</button>` : ''}</div>`;
      const server = it.server ? `<div class="perm-server">${esc(l10n.t('MCP server:'))} <code>${esc(it.server)}</code></div>` : '';
      return `<div class="permission${it.answer ? ' done' : ''}" role="group" aria-label="${esc(l10n.t('Permission request: {0}', it.title))}" data-req="${esc(it.id)}"><div class="perm-title">${esc(it.title)}</div>${server}${permSandbox(it)}${body}${diffBtns ? `<div class="tool-diffs">${diffBtns}</div>` : ''}${buttons}</div>`;
    }
  }
}

/** The tool row's sandbox mark and, for a background program, its state and a Stop button. */
function toolSandbox(it: { sandbox?: SandboxInfo; program?: ProgramState }): string {
  const mark = it.sandbox ? `<span class="tool-sandbox${it.sandbox.applied ? '' : ' off'}" title="${esc(sandboxText(it.sandbox))}">${esc(it.sandbox.applied ? l10n.t('sandboxed') : l10n.t('not sandboxed'))}</span>` : '';
  const p = it.program;
  const prog = p ? `<span class="tool-program" data-program="${esc(p.id)}" data-state="${esc(p.state)}">${esc(programText(p))}</span>${p.state === 'running' ? `<button class="link-btn" data-act="stop-program" data-program="${esc(p.id)}" title="${esc(l10n.t('Stop this background program and what it started'))}">${esc(l10n.t('Stop'))}</button>` : ''}` : '';
  return mark + prog;
}

/** The card's sandbox line, and the escalation's reason when the model asks to run outside it. */
function permSandbox(it: { sandbox?: SandboxInfo; escalation?: string }): string {
  if (it.escalation !== undefined) return `<div class="perm-escalation"><strong>${esc(l10n.t('Outside the sandbox, with your full rights.'))}</strong> ${esc(l10n.t("The model's reason:"))} <q>${esc(it.escalation)}</q></div>`;
  return it.sandbox ? `<div class="perm-sandbox${it.sandbox.applied ? '' : ' off'}">${esc(sandboxText(it.sandbox))}</div>` : '';
}

function answerText(a: string): string {
  switch (a) {
    case 'allow_once': return l10n.t('Allowed once');
    case 'allow_sandboxed': return l10n.t('Sandboxed programs allowed for this session');
    case 'allow_session': return l10n.t('Allowed for this session');
    case 'allow_always': return l10n.t('Always allowed');
    case 'deny': return l10n.t('Denied');
    case 'feedback': return l10n.t('Denied with feedback');
    case 'withdrawn': return l10n.t('No longer needed');
    default: return l10n.t('Cancelled');
  }
}

/** A Changes row's kind ("modified", "created", "renamed from …"), from agentd's change names. */
function changeText(change: string, from?: string): string {
  if (from) return l10n.t('{0} from {1}', changeName(change), from);
  return changeName(change);
}
function changeName(change: string): string {
  switch (change) {
    case 'created': return l10n.t('created');
    case 'modified': return l10n.t('modified');
    case 'deleted': return l10n.t('deleted');
    case 'renamed': return l10n.t('renamed');
    default: return change;
  }
}

/** Per Changes list (by item id), its files still under review, as the extension last said. */
let reviewOpen = new Map<string, string[]>();

function itemKey(it: Item): string {
  if (it.kind === 'changes') return JSON.stringify([it, reviewOpen.get(it.id) ?? null]);
  return JSON.stringify(it);
}

// ---------- streamed replies and thoughts (issue 33 item 3): rendered as they grow, not again
// whole on every frame. StreamMarkdown (src/pure/markdown.ts) says what changed; only the open
// last block is rendered again, and not more often than its rendering cost allows, so that a long
// open block (a paragraph of a thousand lines) takes at most about a quarter of the time.
/** Blocks (or a code block's parts) per group that the browser lays out or skips as one. */
const GROUP = 32;
class LiveMarkdown {
  private readonly stream = new StreamMarkdown();
  private readonly tail = document.createElement('div');
  private codeTail: HTMLElement | undefined;
  private tailHtml = '';
  private codeTailHtml = '';
  /** The group the next finished blocks go into, and the open code block's group of parts. */
  private group: HTMLElement | undefined;
  private codeGroup: HTMLElement | undefined;
  /** Characters of the text rendered; the text was final. */
  shown = 0;
  finished = false;
  private next = 0;
  constructor(readonly id: string, readonly root: HTMLElement) {
    this.tail.className = 'md-tail';
    root.appendChild(this.tail);
  }
  /** Renders `text` (what came before, and more); false when it has to wait for a later frame. */
  render(text: string, final: boolean): boolean {
    if (this.finished || (text.length === this.shown && !final)) return true;
    const t0 = performance.now();
    if (!final && t0 < this.next) return false;
    this.apply(this.stream.update(text, final));
    this.shown = text.length;
    this.finished = final;
    const t1 = performance.now();
    this.next = t1 + Math.min(1000, 3 * (t1 - t0));
    return true;
  }
  /**
   * Puts finished blocks' HTML (marked's, the model's HTML escaped) after the finished ones, in
   * groups of GROUP blocks: the browser skips a group out of sight (content-visibility), and
   * tracking that for each of 2,000 blocks cost more per frame than it saved. Returns the last
   * element put.
   */
  private put(html: string): Element | undefined {
    const t = document.createElement('template');
    t.innerHTML = html;
    let last: Element | undefined;
    for (const node of Array.from(t.content.childNodes)) {
      if (!this.group || this.group.childElementCount >= GROUP) {
        this.group = document.createElement('div');
        this.group.className = 'md-group';
        this.root.insertBefore(this.group, this.tail);
      }
      this.group.appendChild(node);
      if (node instanceof Element) last = node;
    }
    return last;
  }
  private apply(ops: Op[]) {
    for (const o of ops) {
      switch (o.op) {
        case 'block': this.put(o.html); break;
        case 'codeOpen': {
          const code = this.put(o.html)?.querySelector('code');
          this.codeGroup = undefined;
          this.codeTail = document.createElement('span');
          this.codeTail.className = 'code-tail';
          this.codeTailHtml = '';
          code?.appendChild(this.codeTail);
          break;
        }
        // Each part (whole lines) is a box of its own, in groups of GROUP parts: appending lays out
        // the new lines, not the whole block again as one paragraph.
        case 'code': {
          if (!this.codeTail) break;
          if (!this.codeGroup || this.codeGroup.childElementCount >= GROUP) {
            this.codeGroup = document.createElement('span');
            this.codeGroup.className = 'code-group';
            this.codeTail.before(this.codeGroup);
          }
          this.codeGroup.insertAdjacentHTML('beforeend', `<span class="code-part">${o.html}</span>`);
          break;
        }
        case 'codeTail': if (this.codeTail && this.codeTailHtml !== o.html) { this.codeTail.innerHTML = o.html; this.codeTailHtml = o.html; } break;
        case 'codeClose': this.codeTail?.remove(); this.codeTail = undefined; this.codeGroup = undefined; break;
        case 'tail': if (this.tailHtml !== o.html) { this.tail.innerHTML = o.html; this.tailHtml = o.html; } break;
      }
    }
  }
}

/** Some streamed text still waits for a frame to render it in (LiveMarkdown's pacing). */
let liveBehind = false;
function renderLive(it: Extract<Item, { kind: 'agent' | 'thought' }>, i: number) {
  let r = rendered.get(i);
  const n = it.kind === 'agent' ? revealed.get(i) ?? 0 : it.text.length;
  if (!r?.live || r.live.id !== it.id || n < r.live.shown) {
    const wrap = document.createElement('div');
    wrap.className = 'item';
    wrap.innerHTML = itemHtml(it, i);
    place(wrap, r?.el);
    r = { el: wrap, key: '', live: new LiveMarkdown(it.id, wrap.querySelector('.md') as HTMLElement) };
    rendered.set(i, r);
  }
  const live = r.live!;
  const text = it.text.slice(0, n);
  const final = !it.streaming && n >= it.text.length;
  if (!live.render(text, final)) liveBehind = true;
  const busy = it.streaming || !live.finished;
  // The frame's state, written only when it changed (the DOM is not touched on every frame).
  const key = `${it.streaming}:${busy}:${it.kind === 'thought' ? thoughtChoice.get(it.id) ?? '' : ''}`;
  if (r.key === key) return;
  r.key = key;
  if (it.kind === 'agent') {
    const msg = r.el.querySelector('.msg') as HTMLElement;
    msg.classList.toggle('streaming', it.streaming);
    if (busy) msg.setAttribute('aria-busy', 'true'); else msg.removeAttribute('aria-busy');
    let caret = live.root.querySelector(':scope > .caret');
    if (busy && !caret) { caret = document.createElement('span'); caret.className = 'caret'; live.root.appendChild(caret); }
    if (!busy) caret?.remove();
  } else {
    const det = r.el.querySelector('details.thought') as HTMLDetailsElement;
    det.classList.toggle('streaming', it.streaming);
    det.open = it.streaming ? thoughtChoice.get(it.id) ?? true : thoughtChoice.get(it.id) ?? false;
    (det.querySelector('.shimmer') as HTMLElement).textContent = it.streaming ? l10n.t('Thinking…') : l10n.t('Thought');
  }
  announceIfDone(it, i, r.el);
}

function renderItems() {
  // The transcript only grows, except on reset.
  for (const [i, r] of rendered) if (i >= state.items.length) { resized.unobserve(r.el); r.el.remove(); rendered.delete(i); }
  state.items.forEach((it, i) => {
    if (it.kind === 'agent' || it.kind === 'thought') { renderLive(it, i); return; }
    const key = itemKey(it);
    const r = rendered.get(i);
    if (r && r.key === key) return;
    const wrap = document.createElement('div');
    wrap.className = 'item';
    wrap.innerHTML = itemHtml(it, i);
    const el = wrap;
    if (r) {
      // Keep the scroll position of a live program output that the user is reading.
      const oldPre = r.el.querySelector('.tool-out.live pre') as HTMLElement | null;
      place(el, r.el);
      const newPre = el.querySelector('.tool-out.live pre') as HTMLElement | null;
      if (newPre && (!oldPre || oldPre.scrollHeight - oldPre.scrollTop - oldPre.clientHeight < 20)) newPre.scrollTop = newPre.scrollHeight;
    } else place(el);
    rendered.set(i, { el, key });
    announceIfDone(it, i, el);
  });
  if (!state.items.length) {
    clearMessages();
    const e = document.createElement('div');
    e.className = 'empty';
    e.innerHTML = `<p>${esc(l10n.t('Ask agentd to read, explain or change code in this workspace.'))}</p><p class="hint">${esc(l10n.t('Edits land in your editor buffers, unsaved; review them, undo with Ctrl+Z, or save.'))}</p>`;
    messages.appendChild(e);
    rendered.set(-1, { el: e, key: 'empty' });
  } else if (rendered.has(-1)) { rendered.get(-1)!.el.remove(); rendered.delete(-1); }
  keepEnd();
  showPendingPermission();
}

// ---------- screen readers: the transcript is not a live region (it changes on every streamed
// token); finished replies and permission requests are announced once, through one status node.
const announced = new Set<string>();
const announcer = $('.announcer');
function announce(text: string) {
  announcer.textContent = '';
  // A fresh text node after a tick, so the same words twice are read twice.
  setTimeout(() => { announcer.textContent = text; }, 50);
}
function announceIfDone(it: Item, index: number, el: HTMLElement) {
  const key = `${it.kind}:${it.id}`;
  if (announced.has(key)) return;
  if (it.kind === 'agent' && !it.streaming && (revealed.get(index) ?? 0) >= it.text.length) {
    announced.add(key);
    announce(l10n.t('agentd: {0}', (el.querySelector('.md')?.textContent ?? it.text).trim()));
  } else if (it.kind === 'permission' && !it.answer) {
    announced.add(key);
    announce(l10n.t('agentd asks for permission: {0}. {1}.', it.title, buttonsFor(it.options).map(buttonLabel).join(', ')));
  }
}
function markAllAnnounced() {
  for (const it of state.items) announced.add(`${it.kind}:${it.id}`);
}

// ---------- a permission request is brought into view once, without taking the focus: the user
// may be typing (into the chat input or the editor), and a focused button would take the next
// Space or Enter as the answer (issue 33 item 1). Its buttons also accept nothing for ARM_MS after
// it appears, so a click or key already on its way when the card lands answers nothing; a
// question is answered only by a deliberate click, Tab to a button, or the accept/deny keys.
// If it still cannot be seen, the extension raises a notification.
const ARM_MS = 600;
const armedPermissions = new Set<string>();
/** The attributes of a button of a card not armed yet. */
const ARMING_ATTRS = ' disabled aria-disabled="true" data-arming="1"';
function arm(id: string) {
  armedPermissions.add(id);
  messages.querySelectorAll(`.permission[data-req="${CSS.escape(id)}"] button[data-arming]`).forEach((b) => {
    b.removeAttribute('disabled');
    b.removeAttribute('aria-disabled');
    b.removeAttribute('data-arming');
  });
}
const shownPermissions = new Set<string>();
function showPendingPermission() {
  for (const it of state.items) {
    if (it.kind !== 'permission' || it.answer || shownPermissions.has(it.id)) continue;
    shownPermissions.add(it.id);
    if (!armedPermissions.has(it.id)) setTimeout(() => arm(it.id), ARM_MS);
    const card = messages.querySelector(`.permission[data-req="${CSS.escape(it.id)}"]`) as HTMLElement | null;
    if (!card) continue;
    // The answers are what must be seen: for a card taller than the transcript, its buttons.
    const answers = (card.querySelector('.perm-buttons') as HTMLElement | null) ?? card;
    card.scrollIntoView({ block: 'nearest' });
    answers.scrollIntoView({ block: 'nearest' });
    follow.showed(box());
    // Measured after layout: the answers must lie wholly inside the transcript's visible box (a
    // transcript squeezed to a sliver by a tall prompt box shows the card's edge, not its buttons).
    requestAnimationFrame(() => {
      const c = answers.getBoundingClientRect();
      const v = messages.getBoundingClientRect();
      const visible = c.height > 0 && c.top >= v.top - 1 && c.bottom <= v.bottom + 1 && document.visibilityState === 'visible';
      vscode.postMessage({ type: 'permissionShown', requestId: it.id, visible });
    });
  }
}

function modeChoices(): { configId: string; values: { value: string; name: string }[] } {
  const o = state.configOptions.find((c) => c.category === 'mode' || c.id === 'mode');
  const vals = o ? optionValues(o) : [];
  return {
    configId: o?.id ?? 'mode',
    values: vals.length ? vals : [{ value: 'ask', name: l10n.t('Ask') }, { value: 'auto', name: l10n.t('Auto') }, { value: 'plan', name: l10n.t('Plan') }],
  };
}

/** Sets an element's HTML only when it differs from what was set last (renderChrome runs every frame of a stream). */
const lastHtml = new WeakMap<Element, string>();
function setHtml(el: Element, html: string) {
  if (lastHtml.get(el) === html) return;
  lastHtml.set(el, html);
  el.innerHTML = html;
}

/** Sets an element's text only when it differs: a text set again is a new text node, laid out again. */
function setText(el: Element, text: string) {
  if (el.textContent !== text) el.textContent = text;
}

function renderChrome() {
  const ready = state.daemon.status === 'ready';
  // modes
  const m = modeChoices();
  const current = state.mode ?? 'ask';
  setHtml($('.modes'), m.values.map((v) => `<button role="radio" aria-checked="${v.value === current}" class="mode${v.value === current ? ' on' : ''}" data-act="mode" data-config="${esc(m.configId)}" data-value="${esc(v.value)}" title="${esc(l10n.t('{0} mode', v.name))}"${ready ? '' : ' disabled'}>${esc(v.name.replace(/^./, (ch) => ch.toUpperCase()))}</button>`).join(''));
  // model
  const model = state.configOptions.find((c: ConfigOption) => c.category === 'model' || c.id === 'model');
  const sel = $<HTMLSelectElement>('.model');
  if (model) {
    const vals = optionValues(model);
    const html = vals.map((v) => `<option value="${esc(v.value)}"${v.value === model.currentValue ? ' selected' : ''}>${esc(v.name || v.value)}</option>`).join('')
      || `<option>${esc(model.currentValue ?? '')}</option>`;
    if (sel.innerHTML !== html) sel.innerHTML = html;
    sel.dataset.config = model.id;
    sel.hidden = false;
    sel.disabled = !ready;
  } else sel.hidden = true;
  // banner
  const banner = $('.banner');
  if (state.daemon.status === 'ready') banner.hidden = true;
  else {
    banner.hidden = false;
    banner.className = `banner ${state.daemon.status}`;
    setHtml(banner, state.daemon.status === 'starting'
      ? `<span>${esc(state.daemon.message ?? l10n.t('Starting agentd…'))}</span>`
      : `<strong>${esc(l10n.t('agentd is not running.'))}</strong> <span>${esc(state.daemon.message ?? '')}</span><div class="banner-actions"><button data-act="restart">${esc(l10n.t('Restart agentd'))}</button><button class="secondary" data-act="logs">${esc(l10n.t('Show Logs'))}</button></div>`);
  }
  // plan
  const plan = $('.plan');
  if (state.plan.length) {
    plan.hidden = false;
    const icon: Record<string, string> = { completed: '✓', in_progress: '◐', pending: '○' };
    setHtml(plan, `<div class="section-title">${esc(l10n.t('Plan'))}</div><ol>${state.plan.map((p) => `<li class="plan-${esc(p.status ?? 'pending')}"><span class="plan-icon">${icon[p.status ?? 'pending'] ?? '○'}</span>${esc(p.content)}</li>`).join('')}</ol>`);
  } else plan.hidden = true;
  // queue
  const q = $('.queued');
  if (state.queued.length) {
    q.hidden = false;
    setHtml(q, `<div class="section-title">${esc(l10n.t('Queued'))}</div>${state.queued.map((x) => `<div class="queued-item">${esc(x.text)}</div>`).join('')}`);
  } else q.hidden = true;
  // usage meter
  const meter = $('.meter');
  if (state.usage) {
    meter.hidden = false;
    const pct = state.usage.size ? Math.min(100, (100 * state.usage.used) / state.usage.size) : 0;
    const fill = $('.meter-fill');
    if (fill.style.width !== `${pct}%`) fill.style.width = `${pct}%`;
    meter.classList.toggle('high', pct > 80);
    setText($('.meter-text'), l10n.t('Context {0}', usageText(state.usage)));
    const cost = costText(state.usage.cost);
    const c = $('.meter-cost');
    c.hidden = !cost;
    setText(c, cost);
    c.title = cost ? l10n.t('The session\'s cost so far') : '';
  } else meter.hidden = true;
  // send / stop
  $('.stop').hidden = !state.running;
  setText($('.send'), state.running ? l10n.t('Steer') : l10n.t('Send'));
  $('.send').title = state.running ? l10n.t('Add this to the running turn at its next step') : l10n.t('Send the prompt');
  $('.queue').hidden = !state.running;
  setText($('.state-text'), state.running ? l10n.t('Working…') : state.title ?? '');
  document.body.dataset.running = String(state.running);
  document.body.dataset.daemon = state.daemon.status;
}

// ---------- the open chats, newest first: switch between them, close one; the running ones and
// those waiting for a permission answer are marked.
function renderChatList() {
  const nav = $('.chatlist');
  nav.hidden = chats.length < 2;
  if (nav.hidden) { nav.innerHTML = ''; return; }
  nav.innerHTML = chats.map((c) => {
    const title = c.title || l10n.t('New chat');
    const mark = c.waiting ? '!' : c.running ? '◐' : '';
    const what = c.waiting ? l10n.t('waiting for your answer') : c.running ? l10n.t('working') : '';
    return `<div class="chat-row${c.current ? ' current' : ''}${c.running ? ' running' : ''}${c.waiting ? ' waiting' : ''}" data-chat-id="${esc(c.id)}">`
      + `<button class="chat-open" data-act="switch-chat" data-chat="${esc(c.id)}"${c.current ? ' aria-current="true"' : ''} title="${esc(title)}${what ? ` (${esc(what)})` : ''}">`
      + `<span class="chat-mark" aria-hidden="true">${mark}</span><span class="chat-title">${esc(title)}</span>${what ? `<span class="chat-state sr-only">${esc(what)}</span>` : ''}</button>`
      + `<button class="icon-btn chat-close" data-act="close-chat" data-chat="${esc(c.id)}" title="${esc(l10n.t('Close chat'))}" aria-label="${esc(l10n.t('Close chat: {0}', title))}">×</button></div>`;
  }).join('');
  // The chat shown stays in sight in a list that scrolls.
  (nav.querySelector('.chat-row.current') as HTMLElement | null)?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
}

// The chat history: agentd's saved chats (with the names the user gave them), searched as one
// types, each to load, rename or delete.
let sessionNames: Record<string, string> = {};
function renderHistory() {
  const h = $('.history');
  if (!h.querySelector('.history-search')) {
    h.innerHTML = `<div class="section-title">${esc(l10n.t('Chats'))}</div><input class="history-search" type="search" placeholder="${esc(l10n.t('Search chats'))}" aria-label="${esc(l10n.t('Search chats'))}"><div class="history-list" role="list"></div>`;
    h.querySelector('.history-search')!.addEventListener('input', renderHistory);
  }
  const query = (h.querySelector('.history-search') as HTMLInputElement).value;
  const cur = state.sessionId;
  const rows = historyRows(sessions, sessionNames, query);
  (h.querySelector('.history-list') as HTMLElement).innerHTML = sessionsError ? `<div class="notice error">${esc(sessionsError)}</div>`
    : sessions === null ? `<div class="muted">${esc(l10n.t('Loading…'))}</div>`
      : !rows.length ? `<div class="muted">${esc(query ? l10n.t('No saved chat matches.') : l10n.t('No saved chats yet.'))}</div>`
        : rows.map((s) => {
          const title = s.title || s.sessionId;
          return `<div class="session-row" role="listitem"><button class="session${s.sessionId === cur ? ' current' : ''}" data-session="${esc(s.sessionId)}" data-title="${esc(s.title ?? '')}"><span>${esc(title)}</span><span class="muted">${esc(s.updatedAt ? new Date(s.updatedAt).toLocaleString() : '')}</span></button>`
            + `<button class="link-btn" data-act="rename-session" data-sid="${esc(s.sessionId)}" data-title="${esc(s.title ?? '')}" aria-label="${esc(l10n.t('Rename chat: {0}', title))}">${esc(l10n.t('Rename'))}</button>`
            + `<button class="link-btn" data-act="delete-session" data-sid="${esc(s.sessionId)}" data-title="${esc(title)}" aria-label="${esc(l10n.t('Delete chat: {0}', title))}">${esc(l10n.t('Delete'))}</button></div>`;
        }).join('');
}

// ---------- token-by-token reveal: advance each streaming reply towards its full text
let frame = 0;
function tick() {
  frame = 0;
  let more = false;
  state.items.forEach((it, i) => {
    if (it.kind !== 'agent') return;
    const n = revealed.get(i) ?? 0;
    if (n < it.text.length) {
      // A finished reply is shown whole at once; a streaming one catches up within three frames.
      revealed.set(i, revealTo(n, it.text.length, it.streaming));
      more = true;
    }
  });
  liveBehind = false;
  renderItems();
  renderChrome();
  if (more || liveBehind) schedule();
}
function schedule() { if (!frame) frame = requestAnimationFrame(tick); }

/** What VS Code keeps of this webview for a window reload: the chat's session (an editor tab's chat comes back with it). */
let keptSession = '';
function keepSession() {
  const key = `${state.sessionId ?? ''}\n${state.title ?? ''}`;
  if (key === keptSession) return;
  keptSession = key;
  vscode.setState({ sessionId: state.sessionId, title: state.title });
}

/** One of the chat's events from the host. */
function applyEvent(ev: Event) {
  if (ev.type === 'reset') { clearMessages(); follow.reset(); revealed.clear(); $('.history').hidden = true; }
  state = reduce(state, ev);
  // A queued prompt that a Stop did not send, or the prompt of a turn a restore took back, comes
  // back into the input (to edit and send again), unless the input holds text.
  if ((ev.type === 'turnEnded' || ev.type === 'dropTurn') && state.restored && !input.value.trim()) {
    input.value = state.restored;
    input.focus();
  }
}

window.addEventListener('message', (e) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  queueMicrotask(keepSession);
  if (m.type === 'snapshot') {
    const switched = typeof m.chatId === 'string' && m.chatId !== chatId;
    if (switched && chatId) {
      // Another chat: this one's unsent text waits for it, the other's comes back.
      drafts.set(chatId, input.value);
      input.value = drafts.get(m.chatId) ?? '';
      drafts.delete(m.chatId);
      pinned = [];
      renderChips();
      closeSlash();
      closeMentions();
      $('.history').hidden = true;
    }
    if (typeof m.chatId === 'string') chatId = m.chatId;
    state = m.state;
    clearMessages();
    follow.reset();
    revealed.clear();
    state.items.forEach((it, i) => { if (it.kind === 'agent') revealed.set(i, it.text.length); });
    markAllAnnounced();
    // A request still waiting in the chat now shown is brought into view (and announced) again.
    for (const it of state.items) if (it.kind === 'permission' && !it.answer) { shownPermissions.delete(it.id); announced.delete(`${it.kind}:${it.id}`); }
    schedule();
  } else if (m.type === 'chats') {
    chats = Array.isArray(m.chats) ? m.chats : [];
    renderChatList();
  } else if (m.type === 'events' && Array.isArray(m.events)) {
    // The host sends the chat's events in batches (one message per turn of its event loop).
    for (const ev of m.events as Event[]) applyEvent(ev);
    schedule();
  } else if (m.type === 'sessions') {
    sessions = m.sessions ?? [];
    sessionNames = m.names && typeof m.names === 'object' ? m.names : {};
    sessionsError = m.error ?? '';
    renderHistory();
  } else if (m.type === 'review') {
    const open = m.open && typeof m.open === 'object' ? m.open as Record<string, unknown> : {};
    reviewOpen = new Map(Object.entries(open).filter(([, v]) => Array.isArray(v)).map(([k, v]) => [k, (v as unknown[]).map(String)]));
    schedule();
  } else if (m.type === 'focusInput') {
    input.focus();
  } else if (m.type === 'attach' && m.chip) {
    pinned = addChip(pinned, m.chip as Chip);
    renderChips();
  } else if (m.type === 'editorContext') {
    editorCtx = { file: m.file ?? null, selection: m.selection ?? null };
    renderChips();
  } else if (m.type === 'mentions') {
    if (m.token !== mentionToken || !mentionAt(input.value, input.selectionStart ?? input.value.length)) return;
    mentionItems = Array.isArray(m.items) ? m.items : [];
    mentionIndex = 0;
    renderMentions();
  }
});

// The webview used last is the one the commands (Stop, Fork, Set Mode…) act on.
window.addEventListener('focus', () => vscode.postMessage({ type: 'focus' }));

renderItems();
renderChrome();
renderChips();
vscode.postMessage({ type: 'ready' });
