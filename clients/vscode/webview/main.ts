// The chat view's script. It reduces the host's events with the shared reducer and renders
// them: streamed Markdown revealed token by token, highlighted code, collapsible thinking,
// one status row per tool call, permission cards, plan, usage meter, queue, mode and model.
import { Marked, Tokens } from 'marked';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import {
  buttonsFor, ChatState, ConfigOption, DENY_WITH_FEEDBACK, Event, feedbackOption, initialState, Item, optionValues, reduce, slashMatches, usageText, Diff,
} from '../src/pure/viewmodel';

declare function acquireVsCodeApi(): { postMessage(m: unknown): void };
const vscode = acquireVsCodeApi();

for (const [name, lang] of Object.entries({ bash, c, cpp, css, diff, go, java, javascript, json, markdown, python, rust, sql, typescript, xml, yaml })) {
  hljs.registerLanguage(name, lang);
}
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['golang'], { languageName: 'go' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });

function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch]!));
}

const md = new Marked({ gfm: true, breaks: false });
md.use({
  renderer: {
    // Raw HTML from the model is shown as text, never interpreted.
    html(token: Tokens.HTML | Tokens.Tag) { return esc(token.text); },
    code(token: Tokens.Code) {
      const lang = (token.lang ?? '').trim().split(/\s+/)[0].toLowerCase();
      let body: string;
      try {
        body = lang && hljs.getLanguage(lang) ? hljs.highlight(token.text, { language: lang, ignoreIllegals: true }).value : esc(token.text);
      } catch { body = esc(token.text); }
      return `<div class="code"><div class="code-head"><span>${esc(lang || 'text')}</span><button class="copy" data-copy>Copy</button></div><pre><code class="hljs">${body}</code></pre></div>`;
    },
    link(token: Tokens.Link) { return `<a title="${esc(token.href)}">${esc(token.text)}</a>`; },
    image(token: Tokens.Image) { return `<span class="img-alt">[image: ${esc(token.text || token.href)}]</span>`; },
  },
});

function renderMarkdown(text: string): string {
  try { return md.parse(text, { async: false }) as string; } catch { return `<p>${esc(text)}</p>`; }
}

let state: ChatState = initialState();
let sessions: any[] | null = null;
let sessionsError = '';
const revealed = new Map<number, number>(); // item index -> characters revealed so far
const rendered = new Map<number, { el: HTMLElement; key: string }>();

// ---------- skeleton
const app = document.getElementById('app')!;
app.innerHTML = `
<header class="toolbar">
  <div class="modes" role="radiogroup" aria-label="Mode"></div>
  <select class="model" aria-label="Model" title="Model"></select>
  <span class="spacer"></span>
  <button class="icon-btn" data-act="history" title="Chat history" aria-label="Chat history"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><circle cx="8" cy="8" r="6"/><path d="M8 4.5V8l2.5 1.5"/></svg></button>
  <button class="icon-btn" data-act="cmd" data-command="agentd.fork" title="Fork conversation: continue in a copy, the original stays as it is" aria-label="Fork conversation"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><circle cx="4.5" cy="3.5" r="1.5"/><circle cx="11.5" cy="3.5" r="1.5"/><circle cx="8" cy="12.5" r="1.5"/><path d="M4.5 5v1.5c0 1.5 1 2.5 3.5 2.5s3.5-1 3.5-2.5V5M8 9v2"/></svg></button>
  <button class="icon-btn" data-act="new" title="New chat" aria-label="New chat"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M8 3v10M3 8h10"/></svg></button>
  <button class="icon-btn" data-act="provider" title="Configure provider" aria-label="Configure provider"><svg width="16" height="16" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1.3" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true"><path d="M2 4h7M12 4h2M2 8h2M7 8h7M2 12h8M13 12h1"/><circle cx="10.5" cy="4" r="1.5"/><circle cx="5.5" cy="8" r="1.5"/><circle cx="11.5" cy="12" r="1.5"/></svg></button>
</header>
<div class="banner" hidden></div>
<div class="history" hidden></div>
<main class="messages" aria-live="polite"></main>
<section class="plan" hidden></section>
<section class="queued" hidden></section>
<footer class="composer">
  <div class="meter" hidden><div class="meter-bar"><div class="meter-fill"></div></div><span class="meter-text"></span></div>
  <div class="slash-menu" role="listbox" aria-label="Commands" hidden></div>
  <textarea class="input" rows="3" placeholder="Ask agentd… (Enter to send, Shift+Enter for a new line, / for commands)" aria-label="Prompt"></textarea>
  <div class="actions">
    <span class="state-text"></span>
    <button class="stop secondary" hidden>Stop</button>
    <button class="queue secondary" hidden title="Send after the current turn ends">Queue</button>
    <button class="send">Send</button>
  </div>
</footer>`;
const $ = <T extends HTMLElement>(sel: string) => app.querySelector(sel) as T;
const messages = $('.messages');
const input = $<HTMLTextAreaElement>('.input');

// While a turn runs, Send steers it (the message joins the running turn at its next step) and
// Queue sends it as the next prompt instead.
function send(how: 'default' | 'queue' = 'default') {
  const text = input.value.trim();
  if (!text) return;
  input.value = '';
  closeSlash();
  // A / command is a prompt of its own (agentd runs it or expands it), so it waits its turn.
  const steer = state.running && how === 'default' && !text.startsWith('/');
  vscode.postMessage({ type: steer ? 'steer' : 'prompt', text });
}
$('.send').addEventListener('click', () => send());
$('.queue').addEventListener('click', () => send('queue'));
$('.stop').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));

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
    vscode.postMessage({ type: 'listSessions' });
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
  } else if (act === 'perm') {
    vscode.postMessage({ type: 'permission', requestId: t.dataset.req, button: t.dataset.button });
  } else if (act === 'restore') {
    vscode.postMessage({ type: 'restoreCheckpoint', checkpointId: t.dataset.checkpoint });
  } else if (act === 'change') {
    vscode.postMessage({ type: 'openChange', path: t.dataset.path });
  } else if (act === 'cmd') {
    vscode.postMessage({ type: 'command', command: t.dataset.command });
  } else if (act === 'perm-feedback') {
    vscode.postMessage({ type: 'denyWithFeedback', requestId: t.dataset.req });
  } else if (act === 'diff') {
    vscode.postMessage({ type: 'openDiff', index: Number(t.dataset.index), diff: Number(t.dataset.diff) });
  } else if (t.dataset.session) {
    $('.history').hidden = true;
    vscode.postMessage({ type: 'loadSession', sessionId: t.dataset.session, title: t.dataset.title });
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
const STATUS_TEXT: Record<string, string> = { pending: 'pending', in_progress: 'running', completed: 'done', failed: 'failed' };

function shortPath(p: string): string {
  const parts = p.split(/[\\/]/);
  return parts.slice(-2).join('/');
}

/** One "Open diff" button per file change of transcript item `index`. */
function diffButtons(index: number, diffs: Diff[]): string {
  return diffs.map((d, k) => `<button class="link-btn" data-act="diff" data-index="${index}" data-diff="${k}" title="Open in the diff editor">Open diff: ${esc(shortPath(d.path))}</button>`).join('');
}

/** A compact line diff: common head and tail trimmed, the rest as removed/added lines. */
function miniDiff(d: Diff): string {
  const a = (d.oldText ?? '').split('\n');
  const b = d.newText.split('\n');
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let j = 0;
  while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  const lines: string[] = [];
  if (i > 0) lines.push(`<div class="ctx">${esc(a[i - 1])}</div>`);
  for (const l of a.slice(i, a.length - j).slice(0, 40)) lines.push(`<div class="del">- ${esc(l)}</div>`);
  for (const l of b.slice(i, b.length - j).slice(0, 40)) lines.push(`<div class="add">+ ${esc(l)}</div>`);
  if (j > 0) lines.push(`<div class="ctx">${esc(b[b.length - j])}</div>`);
  return `<div class="minidiff"><div class="minidiff-head">${esc(shortPath(d.path))}${d.oldText === null ? ' (new file)' : ''}</div>${lines.join('')}</div>`;
}

function itemHtml(it: Item, index: number): string {
  switch (it.kind) {
    case 'user':
      return `<div class="msg user"${it.checkpointId ? ` data-checkpoint="${esc(it.checkpointId)}"` : ''}><div class="bubble">${esc(it.text).replace(/\n/g, '<br>')}</div>${it.checkpointId ? `<div class="checkpoint"><span class="checkpoint-line" aria-hidden="true"></span><button class="link-btn" data-act="restore" data-checkpoint="${esc(it.checkpointId)}" title="Put the files, the conversation or both back to how they were before this prompt">Restore checkpoint</button></div>` : ''}</div>`;
    case 'agent': {
      const n = revealed.get(index) ?? 0;
      const caret = it.streaming || n < it.text.length ? '<span class="caret"></span>' : '';
      return `<div class="msg agent${it.streaming ? ' streaming' : ''}"><div class="md">${renderMarkdown(it.text.slice(0, n))}${caret}</div></div>`;
    }
    case 'thought':
      return `<details class="thought${it.streaming ? ' streaming' : ''}"${it.streaming ? ' open' : ''}><summary><span class="shimmer">${it.streaming ? 'Thinking…' : 'Thought'}</span></summary><div class="md">${renderMarkdown(it.text)}</div></details>`;
    case 'tool': {
      const diffs = diffButtons(index, it.diffs);
      const out = it.output ? `<details class="tool-out"><summary>output</summary><pre>${esc(it.output.slice(0, 20000))}</pre></details>` : '';
      return `<div class="tool status-${it.status}" data-tool-status="${STATUS_TEXT[it.status] ?? esc(it.status)}"><div class="tool-row"><span class="tool-icon" aria-hidden="true">${STATUS_ICON[it.status] ?? '•'}</span>${it.server ? `<span class="tool-server" title="From the MCP server ${esc(it.server)}">${esc(it.server)}</span>` : ''}<span class="tool-title">${esc(it.title || it.toolKind || 'tool')}</span><span class="tool-status">${STATUS_TEXT[it.status] ?? esc(it.status)}</span></div>${diffs ? `<div class="tool-diffs">${diffs}</div>` : ''}${out}</div>`;
    }
    case 'changes': {
      const sign = (n: number, c: string) => `<span class="${c}">${c === 'added' ? '+' : '−'}${n}</span>`;
      const rows = it.files.map((f) => `<li class="change" data-path="${esc(f.path)}"><span class="change-file" title="${esc(f.path)}">${esc(shortPath(f.path))}</span><span class="change-kind">${esc(f.change)}${f.from ? ` from ${esc(shortPath(f.from))}` : ''}</span>${sign(f.added, 'added')} ${sign(f.removed, 'removed')}${f.change === 'deleted' ? '' : `<button class="link-btn" data-act="change" data-path="${esc(f.path)}" title="Open the file's changes in the diff editor">Open diff</button>`}</li>`).join('');
      const n = it.files.length;
      return `<div class="changes"><div class="changes-head"><span class="section-title">Changes</span><span class="muted">${n} file${n === 1 ? '' : 's'}</span><span class="spacer"></span><button class="secondary" data-act="cmd" data-command="agentd.keepAll" title="Keep every change still under review">Keep All</button><button class="secondary" data-act="cmd" data-command="agentd.undoAll" title="Undo every change still under review">Undo All</button></div><ul>${rows}</ul></div>`;
    }
    case 'notice':
      return `<div class="notice ${it.severity}"><strong>${esc(it.title)}</strong>${it.description ? `<div>${esc(it.description)}</div>` : ''}</div>`;
    case 'permission': {
      const saves = it.saves?.length
        ? `<div class="saves"><div>Saves first:</div><ul>${it.saves.map((f) => `<li data-user-changes="${f.userChanges}"><code>${esc(f.path)}</code>${f.userChanges ? ' <span class="user-changes">(with your unsaved changes)</span>' : ''}</li>`).join('')}</ul></div>`
        : '';
      const body = it.command
        ? `<div class="cmd"><code>${esc(it.command)}</code>${it.cwd ? `<div class="cwd">in ${esc(it.cwd)}</div>` : ''}</div>${saves}`
        : it.diffs.map(miniDiff).join('') + saves;
      const diffBtns = diffButtons(index, it.diffs);
      const buttons = it.answer
        ? `<div class="answered">${esc(answerText(it.answer))}${it.feedback ? `: <q class="feedback">${esc(it.feedback)}</q>` : ''}</div>`
        : `<div class="perm-buttons">${buttonsFor(it.options).map((b, k) => `<button class="${k === 0 ? '' : 'secondary'}" data-act="perm" data-req="${esc(it.id)}" data-button="${esc(b)}">${esc(b)}</button>`).join('')}${feedbackOption(it.options) ? `<button class="secondary" data-act="perm-feedback" data-req="${esc(it.id)}" title="Deny, and tell agentd what to do instead">${esc(DENY_WITH_FEEDBACK)}</button>` : ''}</div>`;
      const server = it.server ? `<div class="perm-server">MCP server: <code>${esc(it.server)}</code></div>` : '';
      return `<div class="permission${it.answer ? ' done' : ''}"><div class="perm-title">${esc(it.title)}</div>${server}${body}${diffBtns ? `<div class="tool-diffs">${diffBtns}</div>` : ''}${buttons}</div>`;
    }
  }
}

function answerText(a: string): string {
  switch (a) {
    case 'Allow once': return 'Allowed once';
    case 'Allow for session': return 'Allowed for this session';
    case 'Always allow': return 'Always allowed';
    case 'Deny': return 'Denied';
    case 'feedback': return 'Denied with feedback';
    case 'withdrawn': return 'No longer needed';
    default: return 'Cancelled';
  }
}

function itemKey(it: Item, index: number): string {
  if (it.kind === 'agent') return `${it.streaming}:${revealed.get(index) ?? 0}:${it.text.length}`;
  return JSON.stringify(it);
}

function renderItems() {
  // The transcript only grows, except on reset.
  for (const [i, r] of rendered) if (i >= state.items.length) { r.el.remove(); rendered.delete(i); }
  const atBottom = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
  state.items.forEach((it, i) => {
    const key = itemKey(it, i);
    const r = rendered.get(i);
    if (r && r.key === key) return;
    const wrap = document.createElement('div');
    wrap.className = 'item';
    wrap.innerHTML = itemHtml(it, i);
    const el = wrap;
    if (r) {
      // Keep a thought block's open/closed choice.
      const oldDetails = r.el.querySelector('details.thought') as HTMLDetailsElement | null;
      const newDetails = el.querySelector('details.thought') as HTMLDetailsElement | null;
      if (oldDetails && newDetails && !(it.kind === 'thought' && it.streaming)) newDetails.open = oldDetails.open;
      r.el.replaceWith(el);
    } else messages.appendChild(el);
    rendered.set(i, { el, key });
  });
  if (!state.items.length) {
    messages.innerHTML = '';
    rendered.clear();
    const e = document.createElement('div');
    e.className = 'empty';
    e.innerHTML = '<p>Ask agentd to read, explain or change code in this workspace.</p><p class="hint">Edits land in your editor buffers, unsaved; review them, undo with Ctrl+Z, or save.</p>';
    messages.appendChild(e);
    rendered.set(-1, { el: e, key: 'empty' });
  } else if (rendered.has(-1)) { rendered.get(-1)!.el.remove(); rendered.delete(-1); }
  if (atBottom) messages.scrollTop = messages.scrollHeight;
}

function modeChoices(): { configId: string; values: { value: string; name: string }[] } {
  const o = state.configOptions.find((c) => c.category === 'mode' || c.id === 'mode');
  const vals = o ? optionValues(o) : [];
  return {
    configId: o?.id ?? 'mode',
    values: vals.length ? vals : [{ value: 'ask', name: 'Ask' }, { value: 'auto', name: 'Auto' }, { value: 'plan', name: 'Plan' }],
  };
}

function renderChrome() {
  const ready = state.daemon.status === 'ready';
  // modes
  const m = modeChoices();
  const current = state.mode ?? 'ask';
  $('.modes').innerHTML = m.values.map((v) => `<button role="radio" aria-checked="${v.value === current}" class="mode${v.value === current ? ' on' : ''}" data-act="mode" data-config="${esc(m.configId)}" data-value="${esc(v.value)}" title="${esc(v.name)} mode"${ready ? '' : ' disabled'}>${esc(v.name.replace(/^./, (ch) => ch.toUpperCase()))}</button>`).join('');
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
    banner.innerHTML = state.daemon.status === 'starting'
      ? `<span>${esc(state.daemon.message ?? 'Starting agentd…')}</span>`
      : `<strong>agentd is not running.</strong> <span>${esc(state.daemon.message ?? '')}</span><div class="banner-actions"><button data-act="restart">Restart agentd</button><button class="secondary" data-act="logs">Show Logs</button></div>`;
  }
  // plan
  const plan = $('.plan');
  if (state.plan.length) {
    plan.hidden = false;
    const icon: Record<string, string> = { completed: '✓', in_progress: '◐', pending: '○' };
    plan.innerHTML = `<div class="section-title">Plan</div><ol>${state.plan.map((p) => `<li class="plan-${esc(p.status ?? 'pending')}"><span class="plan-icon">${icon[p.status ?? 'pending'] ?? '○'}</span>${esc(p.content)}</li>`).join('')}</ol>`;
  } else plan.hidden = true;
  // queue
  const q = $('.queued');
  if (state.queued.length) {
    q.hidden = false;
    q.innerHTML = `<div class="section-title">Queued</div>${state.queued.map((x) => `<div class="queued-item">${esc(x.text)}</div>`).join('')}`;
  } else q.hidden = true;
  // usage meter
  const meter = $('.meter');
  if (state.usage) {
    meter.hidden = false;
    const pct = state.usage.size ? Math.min(100, (100 * state.usage.used) / state.usage.size) : 0;
    ($('.meter-fill') as HTMLElement).style.width = `${pct}%`;
    meter.classList.toggle('high', pct > 80);
    $('.meter-text').textContent = `Context ${usageText(state.usage)}`;
  } else meter.hidden = true;
  // send / stop
  $('.stop').hidden = !state.running;
  $('.send').textContent = state.running ? 'Steer' : 'Send';
  $('.send').title = state.running ? 'Add this to the running turn at its next step' : 'Send the prompt';
  $('.queue').hidden = !state.running;
  $('.state-text').textContent = state.running ? 'Working…' : state.title ?? '';
  document.body.dataset.running = String(state.running);
  document.body.dataset.daemon = state.daemon.status;
}

function renderHistory() {
  const h = $('.history');
  const cur = state.sessionId;
  h.innerHTML = `<div class="section-title">Chats</div>${sessionsError ? `<div class="notice error">${esc(sessionsError)}</div>`
    : sessions === null ? '<div class="muted">Loading…</div>'
      : sessions.length === 0 ? '<div class="muted">No saved chats yet.</div>'
        : sessions.map((s) => `<button class="session${s.sessionId === cur ? ' current' : ''}" data-session="${esc(s.sessionId)}" data-title="${esc(s.title ?? '')}"><span>${esc(s.title || s.sessionId)}</span><span class="muted">${esc(s.updatedAt ? new Date(s.updatedAt).toLocaleString() : '')}</span></button>`).join('')}`;
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
      const step = Math.max(2, Math.ceil((it.text.length - n) / 8));
      revealed.set(i, Math.min(it.text.length, n + step));
      more = true;
    }
  });
  renderItems();
  renderChrome();
  if (more) schedule();
}
function schedule() { if (!frame) frame = requestAnimationFrame(tick); }

window.addEventListener('message', (e) => {
  const m = e.data;
  if (!m || typeof m !== 'object') return;
  if (m.type === 'snapshot') {
    state = m.state;
    messages.innerHTML = '';
    rendered.clear();
    revealed.clear();
    state.items.forEach((it, i) => { if (it.kind === 'agent') revealed.set(i, it.text.length); });
    schedule();
  } else if (m.type === 'event') {
    const ev = m.event as Event;
    if (ev.type === 'reset') { messages.innerHTML = ''; rendered.clear(); revealed.clear(); $('.history').hidden = true; }
    state = reduce(state, ev);
    schedule();
  } else if (m.type === 'sessions') {
    sessions = m.sessions ?? [];
    sessionsError = m.error ?? '';
    renderHistory();
  } else if (m.type === 'focusInput') {
    input.focus();
  }
});

renderItems();
renderChrome();
vscode.postMessage({ type: 'ready' });
