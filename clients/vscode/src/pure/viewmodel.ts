// The chat view's model: a pure reduction of agentd's `agent/session/update` notifications and
// the extension's own events (prompt sent, turn ended, permission asked, daemon state). The
// extension host and the webview run the same reducer: the host keeps the state to restore a
// re-created view, the webview applies each event as it streams in. Its texts go through l10n.t
// (src/pure/l10n.ts).
import * as l10n from '@vscode/l10n';
import { escalationOf, programOf, ProgramState, sandboxOf, SandboxInfo } from './sandbox';

export interface Diff { path: string; oldText: string | null; newText: string }
export interface PlanEntry { content: string; priority?: string; status?: string }
export interface ConfigOptionValue { value: string; name: string; description?: string }
export interface ConfigOption {
  id: string;
  name: string;
  description?: string;
  category?: string;
  type?: string;
  currentValue?: string;
  options?: Array<ConfigOptionValue | { group?: string; name?: string; options: ConfigOptionValue[] }>;
}
export interface PermissionOption { optionId: string; name?: string; kind?: string; _meta?: Record<string, unknown> }

export type ToolStatus = 'pending' | 'in_progress' | 'completed' | 'failed';

/** One file a turn changed (`_meta["agentd/changes"]` on the prompt's answer). */
export interface Change { path: string; change: string; from?: string; added: number; removed: number }
/** A checkpoint from `agent/x/checkpoints/list`. */
export interface Checkpoint { checkpointId: string; createdAt?: string; prompt: string; files: Array<{ path: string; change: string; from?: string }> }

export type Item =
  | { kind: 'user'; id: string; text: string; checkpointId?: string }
  | { kind: 'agent'; id: string; text: string; streaming: boolean }
  | { kind: 'thought'; id: string; text: string; streaming: boolean }
  | {
    kind: 'tool'; id: string; title: string; toolKind?: string; status: ToolStatus;
    diffs: Diff[]; output: string; rawInput?: unknown; command?: string; cwd?: string;
    /** The MCP server the tool comes from (`_meta["agentd/mcpServer"]`), made visible. */
    server?: string;
    /** The agent call a subagent's call runs under (`_meta["agentd/parentToolCallId"]`). */
    parent?: string;
    /** A program's sandbox and, run in the background, its state (src/pure/sandbox.ts). */
    sandbox?: SandboxInfo; program?: ProgramState;
  }
  | { kind: 'changes'; id: string; files: Change[] }
  | { kind: 'notice'; id: string; severity: 'info' | 'warning' | 'error'; title: string; description?: string }
  | {
    kind: 'permission'; id: string; toolCallId?: string; title: string; toolKind?: string;
    diffs: Diff[]; command?: string; cwd?: string; saves?: Save[]; options: PermissionOption[]; answer?: string;
    server?: string; feedback?: string;
    /** A program's sandbox, and the model's reason when it asks to run outside it (made visible). */
    sandbox?: SandboxInfo; escalation?: string;
  } & Extras;

/** A NAME and its value as shown: made visible, long values cut, secret-looking ones masked. */
export interface Pair { name: string; value: string }
/** What a program reads on its standard input, as the card shows it: the start, and its size. */
export interface StdinPreview { preview: string; bytes: number; lines: number; truncated: boolean }
/**
 * What a program or an MCP server gets besides its argv: environment variables, HTTP headers, its
 * standard input. Each is part of what the user grants (PROTOCOL.md v1.2 "Trust, per session").
 */
export interface Extras { env?: Pair[]; headers?: Pair[]; stdin?: StdinPreview }

/** A file agentd saves before running a program (`_meta["agentd/saves"]`); userChanges: the buffer also holds the user's own unsaved changes. */
export interface Save { path: string; userChanges: boolean }

export type DaemonStatus = 'starting' | 'ready' | 'stopped' | 'error';

export interface ChatState {
  sessionId?: string;
  title?: string;
  items: Item[];
  running: boolean;
  activePromptId?: string;
  queued: Array<{ id: string; text: string }>;
  plan: PlanEntry[];
  usage?: { used: number; size: number; cost?: unknown };
  mode?: string;
  configOptions: ConfigOption[];
  commands: Array<{ name: string; description?: string; input?: unknown }>;
  /** The session's checkpoints, newest first (`agent/x/checkpoints/list`). */
  checkpoints: Checkpoint[];
  daemon: { status: DaemonStatus; message?: string };
  /** Prompts queued behind a stopped turn, or the prompt of a turn a restore dropped, given back to the input (cleared by the next prompt). */
  restored?: string;
  /** Texts of prompts shown locally whose `user_message_chunk` echo is still to come. */
  echoes: string[];
  seq: number;
}

export type Event =
  | { type: 'update'; sessionId?: string; update: Record<string, any> }
  | { type: 'reset'; sessionId?: string; title?: string; configOptions?: ConfigOption[] }
  | { type: 'configOptions'; configOptions: ConfigOption[] }
  /** The chat goes on in another agentd session (or in none yet), transcript kept. */
  | { type: 'session'; sessionId?: string; configOptions?: ConfigOption[] }
  | { type: 'promptSent'; promptId: string; text: string }
  | { type: 'turnEnded'; promptId: string; stopReason?: string; error?: string; errorDetail?: string; changes?: unknown }
  | { type: 'permissionAsked'; requestId: string; params: Record<string, any> }
  | { type: 'permissionAnswered'; requestId: string; answer: string; feedback?: string }
  | { type: 'checkpoints'; checkpoints: unknown }
  /** A conversation restore: the turn that checkpoint started, and everything after it, are gone. */
  | { type: 'dropTurn'; checkpointId: string }
  | { type: 'daemon'; status: DaemonStatus; message?: string }
  | { type: 'notice'; severity: 'info' | 'warning' | 'error'; title: string; description?: string };

export function initialState(): ChatState {
  return { items: [], running: false, queued: [], plan: [], configOptions: [], commands: [], checkpoints: [], daemon: { status: 'starting' }, echoes: [], seq: 0 };
}

function textOf(content: any): string {
  if (!content) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map(textOf).join('');
  if (content.type === 'text') return String(content.text ?? '');
  if (content.type === 'resource_link') return `[${content.name ?? content.uri}](${content.uri})`;
  if (content.type === 'resource') return '';
  if (content.type === 'content') return textOf(content.content);
  return '';
}

function diffsOf(content: any): Diff[] {
  if (!Array.isArray(content)) return [];
  return content
    .filter((c) => c && c.type === 'diff' && typeof c.path === 'string')
    .map((c) => ({ path: c.path, oldText: c.oldText ?? null, newText: String(c.newText ?? '') }));
}

function outputOf(content: any): string {
  if (!Array.isArray(content)) return '';
  return content.filter((c) => c && c.type === 'content').map((c) => textOf(c.content)).join('\n');
}

/** The command line and cwd of a program-running tool call, from its rawInput. */
// C0 and C1 controls, DEL, and the bidi overrides and isolates: a model could hide or reorder text with them.
const HIDING = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const hex = (c: string) => { const n = c.charCodeAt(0); return n < 0x100 ? `\\x${n.toString(16).padStart(2, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`; };

/** A model- or server-derived string on one line with every hiding character written as an escape. */
export function visible(s: string): string {
  return s.replace(HIDING, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : hex(c)));
}

/** An argv list as a shell would need it typed: plain words bare, others quoted, hiding characters as $'\xNN'. */
export function quoteArgv(argv: string[]): string {
  return argv.map((a) => {
    if (a !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(a)) return a;
    HIDING.lastIndex = 0;
    if (HIDING.test(a)) return `$'${a.replace(/[\\']/g, (c) => `\\${c}`).replace(HIDING, hex)}'`;
    return `'${a.replace(/'/g, `'\\''`)}'`;
  }).join(' ');
}

/** A program permission's command (agentd sends `command` as an argv list) and directory, for display. */
export function commandOf(rawInput: any): { command?: string; cwd?: string } {
  if (!rawInput || typeof rawInput !== 'object') return {};
  let command: string | undefined;
  const strs = (a: unknown[]) => a.map((x) => String(x));
  if (Array.isArray(rawInput.command)) command = quoteArgv(strs(rawInput.command));
  else if (Array.isArray(rawInput.argv)) command = quoteArgv(strs(rawInput.argv));
  else if (Array.isArray(rawInput.args)) command = quoteArgv(strs([rawInput.command ?? rawInput.program ?? '', ...rawInput.args].filter(Boolean)));
  else if (typeof rawInput.command === 'string') command = visible(rawInput.command);
  else if (typeof rawInput.program === 'string') command = visible(rawInput.program);
  else if (typeof rawInput.url === 'string') command = visible(rawInput.url);
  const cwd = typeof rawInput.cwd === 'string' ? visible(rawInput.cwd) : undefined;
  return { command, cwd };
}

const MAX_PAIRS = 200;
const MAX_VALUE = 300;
const STDIN_LINES = 8;
const STDIN_CHARS = 600;
// Values under these names are credentials: the card says one is there, not what it is.
const SECRET_NAME = /(authorization|cookie|token|secret|passw(or)?d|api[-_]?key|private[-_]?key|credential)/i;

function pairsOf(v: unknown): Pair[] | undefined {
  let raw: Array<[string, unknown]> = [];
  if (Array.isArray(v)) raw = v.filter((e: any) => e && typeof e.name === 'string').map((e: any) => [e.name, e.value]);
  else if (v && typeof v === 'object') raw = Object.entries(v as Record<string, unknown>);
  if (!raw.length) return undefined;
  const out: Pair[] = raw.slice(0, MAX_PAIRS).map(([n, x]) => {
    const value = typeof x === 'string' ? x : x === undefined || x === null ? '' : JSON.stringify(x);
    let shown: string;
    if (SECRET_NAME.test(n) && value) shown = l10n.t('(hidden, {0} characters)', value.length);
    else if (value.length > MAX_VALUE) shown = l10n.t('{0}… ({1} characters)', visible(value.slice(0, MAX_VALUE)), value.length);
    else shown = visible(value);
    return { name: visible(n), value: shown };
  });
  if (raw.length > MAX_PAIRS) out.push({ name: '…', value: l10n.t('{0} more not shown', raw.length - MAX_PAIRS) });
  return out;
}

function stdinOf(v: unknown): StdinPreview | undefined {
  if (typeof v !== 'string') return undefined;
  const bytes = new TextEncoder().encode(v).length;
  const all = v.split('\n');
  const lines = v === '' ? 0 : v.endsWith('\n') ? all.length - 1 : all.length;
  let truncated = lines > STDIN_LINES;
  const shown = all.slice(0, STDIN_LINES).map((l) => {
    if (l.length > STDIN_CHARS) { truncated = true; l = l.slice(0, STDIN_CHARS); }
    return visible(l);
  });
  let preview = shown.join('\n').replace(/\n$/, '');
  if (preview.length > STDIN_CHARS) { truncated = true; preview = preview.slice(0, STDIN_CHARS); }
  return { preview, bytes, lines, truncated };
}

/** The env, headers and stdin of a program's or MCP server's rawInput, for the card. */
export function extrasOf(rawInput: any): Extras {
  if (!rawInput || typeof rawInput !== 'object') return {};
  const out: Extras = {};
  const env = pairsOf(rawInput.env);
  if (env) out.env = env;
  const headers = pairsOf(rawInput.headers);
  if (headers) out.headers = headers;
  const stdin = stdinOf(rawInput.stdin);
  if (stdin) out.stdin = stdin;
  return out;
}

/** The extras on one line, for the notification: "env: A=1, B=2; headers: X: y; stdin: 120 bytes, 4 lines". */
export function extrasText(x: Extras): string {
  const parts: string[] = [];
  if (x.env?.length) parts.push(l10n.t('env: {0}', x.env.map((p) => `${p.name}=${p.value}`).join(', ')));
  if (x.headers?.length) parts.push(l10n.t('headers: {0}', x.headers.map((p) => `${p.name}: ${p.value}`).join(', ')));
  if (x.stdin) parts.push(stdinSize(x.stdin));
  return parts.join('; ');
}

/** "stdin: 120 bytes, 4 lines". */
export function stdinSize(x: StdinPreview): string {
  return x.lines === 1 ? l10n.t('stdin: {0} bytes, 1 line', x.bytes) : l10n.t('stdin: {0} bytes, {1} lines', x.bytes, x.lines);
}

/** The well-formed entries of a permission request's `_meta["agentd/saves"]`, paths made visible. */
export function savesOf(v: unknown): Save[] {
  if (!Array.isArray(v)) return [];
  return v.filter((e: any) => typeof e?.path === 'string').map((e: any) => ({ path: visible(e.path), userChanges: e.userChanges === true }));
}

/** One line saying what is saved before a program runs; "" when nothing is. */
export function savesText(saves: Save[]): string {
  if (!saves.length) return '';
  return l10n.t('Saves first: {0}', saves.map((s) => (s.userChanges ? l10n.t('{0} (with your unsaved changes)', s.path) : s.path)).join(', '));
}

/** The MCP server named in a tool call's or permission's `_meta["agentd/mcpServer"]`, made visible. */
export function serverOf(meta: any): string | undefined {
  const v = meta?.['agentd/mcpServer'];
  return typeof v === 'string' && v ? visible(v) : undefined;
}

/** The well-formed entries of `_meta["agentd/changes"]`, paths made visible. */
export function changesOf(v: unknown): Change[] {
  if (!Array.isArray(v)) return [];
  return v.filter((e: any) => typeof e?.path === 'string').map((e: any) => ({
    path: visible(e.path), change: visible(String(e.change ?? 'modified')), from: typeof e.from === 'string' ? visible(e.from) : undefined,
    added: Number(e.added) || 0, removed: Number(e.removed) || 0,
  }));
}

/**
 * The text each file turn `promptId` modified or created had before the turn: the old side of
 * the first diff the turn's completed tool calls made to it (what the editor's review compares
 * with). `abs` makes a path absolute; files deleted or renamed away have nothing to review.
 */
export function turnBaselines(items: Item[], promptId: string, changes: unknown, abs: (p: string) => string): Array<{ path: string; baseline: string; created: boolean }> {
  const start = items.findIndex((it) => it.kind === 'user' && it.id === promptId);
  if (start < 0 || !Array.isArray(changes)) return [];
  const want = new Set(changes.filter((c: any) => typeof c?.path === 'string' && (c.change === 'modified' || c.change === 'created')).map((c: any) => abs(c.path)));
  const out = new Map<string, { path: string; baseline: string; created: boolean }>();
  for (const it of items.slice(start)) {
    if (it.kind !== 'tool' || it.status !== 'completed') continue;
    for (const d of it.diffs) {
      const p = abs(d.path);
      if (want.has(p) && !out.has(p)) out.set(p, { path: p, baseline: d.oldText ?? '', created: d.oldText === null });
    }
  }
  return [...out.values()];
}

/** The well-formed checkpoints of an `agent/x/checkpoints/list` answer. */
export function checkpointsOf(v: unknown): Checkpoint[] {
  if (!Array.isArray(v)) return [];
  return v.filter((c: any) => typeof c?.checkpointId === 'string').map((c: any) => ({
    checkpointId: c.checkpointId, createdAt: typeof c.createdAt === 'string' ? c.createdAt : undefined,
    prompt: String(c.prompt ?? ''), files: Array.isArray(c.files) ? c.files.filter((f: any) => typeof f?.path === 'string') : [],
  }));
}

const squash = (t: string) => t.replace(/\s+/g, ' ').trim();

/**
 * Puts each checkpoint on the user message that started its turn: checkpoints, oldest first,
 * go to the user messages in order, each to the next one whose text begins with the
 * checkpoint's (possibly clipped) prompt.
 */
function markCheckpoints(s: ChatState) {
  const users = s.items.filter((it): it is Extract<Item, { kind: 'user' }> => it.kind === 'user');
  for (const u of users) u.checkpointId = undefined;
  let k = 0;
  for (const cp of [...s.checkpoints].reverse()) {
    const want = squash(cp.prompt.replace(/…$/, ''));
    for (let i = k; i < users.length; i++) {
      if (squash(users[i].text).startsWith(want)) { users[i].checkpointId = cp.checkpointId; k = i + 1; break; }
    }
  }
}

/** The `/` commands matching what the input holds: its text is `/` and a word being typed. */
export function slashMatches(commands: ChatState['commands'], text: string): ChatState['commands'] {
  const m = /^\/(\S*)$/.exec(text);
  if (!m) return [];
  const typed = m[1].toLowerCase();
  return commands.filter((c) => typeof c?.name === 'string' && c.name.replace(/^\//, '').toLowerCase().startsWith(typed));
}

/** Gives unsent queued prompts back to the input, with one notice saying so. */
function restore(s: ChatState, texts: string[]) {
  if (!texts.length) return;
  const had = s.restored !== undefined;
  s.restored = [s.restored, ...texts].filter((t) => t !== undefined).join('\n\n');
  if (!had) s.items.push({ kind: 'notice', id: `notice-${++s.seq}`, severity: 'info', title: l10n.t('Your queued prompt was not sent; it is back in the input.') });
}

/** Starts a prompt's turn: its text is shown now, and agentd's echo of it is expected. */
function startTurn(s: ChatState, promptId: string, text: string) {
  s.running = true;
  s.activePromptId = promptId;
  s.items.push({ kind: 'user', id: promptId, text });
  s.echoes.push(text);
}

function stopStreaming(s: ChatState) {
  for (const it of s.items) if ((it.kind === 'agent' || it.kind === 'thought') && it.streaming) it.streaming = false;
}

/** The agent call named by a subagent's update (`_meta["agentd/parentToolCallId"]`). */
function parentOf(meta: unknown): string | undefined {
  const p = (meta as Record<string, unknown> | undefined)?.['agentd/parentToolCallId'];
  return typeof p === 'string' && p !== '' ? p : undefined;
}

/** Adds a tool call; a subagent's goes after its agent call and the children it already has. */
function addTool(s: ChatState, it: Extract<Item, { kind: 'tool' }>, parent: string | undefined) {
  it.parent = parent;
  const at = parent === undefined ? -1 : s.items.findIndex((x) => x.kind === 'tool' && x.id === parent);
  if (at < 0) { s.items.push(it); return; }
  let end = at + 1;
  while (end < s.items.length && (s.items[end] as { parent?: string }).parent === parent) end++;
  s.items.splice(end, 0, it);
}

function find<K extends Item['kind']>(s: ChatState, kind: K, id: string): Extract<Item, { kind: K }> | undefined {
  for (let i = s.items.length - 1; i >= 0; i--) {
    const it = s.items[i];
    if (it.kind === kind && it.id === id) return it as Extract<Item, { kind: K }>;
  }
  return undefined;
}

function appendChunk(s: ChatState, kind: 'agent' | 'thought', messageId: string | undefined, text: string) {
  // Chunks join the last block when it is of the same kind and message; anything in between
  // (a tool call, a permission request) starts a new block so the transcript keeps its order.
  const last = s.items[s.items.length - 1];
  let it: Extract<Item, { kind: 'agent' | 'thought' }>;
  if (last && last.kind === kind && (!messageId || last.id === messageId)) it = last;
  else {
    stopStreaming(s);
    it = { kind, id: messageId ?? `${kind}-${++s.seq}`, text: '', streaming: s.running } as Extract<Item, { kind: 'agent' | 'thought' }>;
    s.items.push(it);
  }
  it.text += text;
  // A reply after thinking means the thought block is complete.
  if (kind === 'agent') for (const x of s.items) if (x.kind === 'thought') x.streaming = false;
}

function modeFrom(options: ConfigOption[]): string | undefined {
  const o = options.find((c) => c.category === 'mode' || c.id === 'mode');
  return o?.currentValue;
}

function setConfigOptions(s: ChatState, options: ConfigOption[]) {
  s.configOptions = options;
  s.mode = modeFrom(options) ?? s.mode;
}

export function reduce(s: ChatState, e: Event): ChatState {
  switch (e.type) {
    case 'reset': {
      const daemon = s.daemon;
      const fresh = initialState();
      fresh.daemon = daemon;
      fresh.sessionId = e.sessionId;
      fresh.title = e.title;
      fresh.configOptions = e.configOptions ?? [];
      fresh.mode = modeFrom(fresh.configOptions);
      return fresh;
    }
    case 'session':
      s.sessionId = e.sessionId;
      if (e.configOptions) setConfigOptions(s, e.configOptions);
      return s;
    case 'configOptions':
      setConfigOptions(s, e.configOptions);
      return s;
    case 'daemon':
      s.daemon = { status: e.status, message: e.message };
      if (e.status !== 'ready' && e.status !== 'starting') {
        s.running = false;
        s.activePromptId = undefined;
        s.queued = [];
        stopStreaming(s);
      }
      return s;
    case 'notice':
      s.items.push({ kind: 'notice', id: `notice-${++s.seq}`, severity: e.severity, title: e.title, description: e.description });
      return s;
    case 'promptSent':
      s.restored = undefined;
      if (s.running) {
        s.queued.push({ id: e.promptId, text: e.text });
      } else {
        startTurn(s, e.promptId, e.text);
      }
      return s;
    case 'turnEnded': {
      const q = s.queued.findIndex((x) => x.id === e.promptId);
      if (q >= 0) {
        const [x] = s.queued.splice(q, 1);
        // agentd cancels the prompts queued behind a stopped turn (possibly before it answers the
        // stopped one): their text goes back to the input instead of vanishing.
        if (e.stopReason === 'cancelled') restore(s, [x.text]);
        return s;
      }
      if (s.activePromptId !== e.promptId) return s;
      stopStreaming(s);
      for (const it of s.items) {
        if (it.kind === 'tool' && (it.status === 'pending' || it.status === 'in_progress') && e.stopReason === 'cancelled') it.status = 'failed';
        if (it.kind === 'permission' && !it.answer && e.stopReason === 'cancelled') it.answer = 'cancelled';
      }
      const changes = changesOf(e.changes);
      if (changes.length) s.items.push({ kind: 'changes', id: `changes-${e.promptId}`, files: changes });
      if (e.error) s.items.push({ kind: 'notice', id: `notice-${++s.seq}`, severity: 'error', title: e.error, description: e.errorDetail });
      else if (e.stopReason && e.stopReason !== 'end_turn') {
        s.items.push({ kind: 'notice', id: `notice-${++s.seq}`, severity: e.stopReason === 'cancelled' ? 'info' : 'warning', title: stopReasonText(e.stopReason) });
      }
      s.running = false;
      s.activePromptId = undefined;
      if (e.stopReason === 'cancelled' && s.queued.length) {
        restore(s, s.queued.map((x) => x.text));
        s.queued = [];
      }
      const next = s.queued.shift();
      if (next) startTurn(s, next.id, next.text);
      return s;
    }
    case 'permissionAsked': {
      stopStreaming(s);
      const p = e.params ?? {};
      const tc = p.toolCall ?? {};
      const cmd = commandOf(tc.rawInput);
      s.items.push({
        kind: 'permission', id: e.requestId, toolCallId: tc.toolCallId, title: String(tc.title ?? l10n.t('Permission requested')),
        toolKind: tc.kind, diffs: diffsOf(tc.content), command: cmd.command, cwd: cmd.cwd, saves: savesOf(tc._meta?.['agentd/saves']),
        options: Array.isArray(p.options) ? p.options : [], server: serverOf(tc._meta),
        sandbox: sandboxOf(tc._meta), escalation: ((x) => x && visible(x))(escalationOf(tc.rawInput)),
        // The request's own rawInput first; what it leaves out, the same call's tool update says
        // (an agentd that sends env and stdin only there must not hide them from the card).
        ...extrasOf(typeof tc.toolCallId === 'string' ? find(s, 'tool', tc.toolCallId)?.rawInput : undefined),
        ...extrasOf(tc.rawInput),
      });
      return s;
    }
    case 'permissionAnswered': {
      const it = find(s, 'permission', e.requestId);
      if (it) { it.answer = e.answer; if (e.feedback) it.feedback = e.feedback; }
      return s;
    }
    case 'checkpoints':
      s.checkpoints = checkpointsOf(e.checkpoints);
      markCheckpoints(s);
      return s;
    case 'dropTurn': {
      const i = s.items.findIndex((it) => it.kind === 'user' && it.checkpointId === e.checkpointId);
      if (i >= 0) {
        // The prompt that started the dropped turn goes back to the input, to edit and send again.
        const u = s.items[i] as Extract<Item, { kind: 'user' }>;
        s.restored = u.text;
        s.items.splice(i);
      }
      s.plan = [];
      return s;
    }
    case 'update':
      if (e.sessionId && s.sessionId && e.sessionId !== s.sessionId) return s;
      return applyUpdate(s, e.update ?? {});
  }
  return s;
}

export function stopReasonText(r: string): string {
  switch (r) {
    case 'cancelled': return l10n.t('Stopped.');
    case 'max_tokens': return l10n.t('The reply hit the output token limit.');
    case 'max_turn_requests': return l10n.t('The turn hit the iteration limit.');
    case 'refusal': return l10n.t('The model refused.');
    default: return l10n.t('Turn ended: {0}', r);
  }
}

function applyUpdate(s: ChatState, u: Record<string, any>): ChatState {
  switch (u.sessionUpdate) {
    case 'user_message_chunk': {
      const text = textOf(u.content);
      const echo = s.echoes.indexOf(text);
      if (echo >= 0) { s.echoes.splice(echo, 1); return s; }
      const last = s.items[s.items.length - 1];
      if (u.messageId && last && last.kind === 'user' && last.id === u.messageId) last.text += text;
      else s.items.push({ kind: 'user', id: u.messageId ?? `user-${++s.seq}`, text });
      if (s.checkpoints.length) markCheckpoints(s);
      return s;
    }
    case 'agent_message_chunk':
      appendChunk(s, 'agent', u.messageId, textOf(u.content));
      return s;
    case 'agent_thought_chunk':
      appendChunk(s, 'thought', u.messageId, textOf(u.content));
      return s;
    case 'tool_call': {
      stopStreaming(s);
      const existing = find(s, 'tool', u.toolCallId);
      const cmd = commandOf(u.rawInput);
      const it = existing ?? {
        kind: 'tool' as const, id: String(u.toolCallId), title: String(u.title ?? ''), status: 'pending' as ToolStatus,
        diffs: [], output: '',
      };
      it.title = String(u.title ?? it.title);
      it.toolKind = u.kind ?? it.toolKind;
      if (u.status) it.status = u.status;
      if (u.rawInput !== undefined) { it.rawInput = u.rawInput; it.command = cmd.command; it.cwd = cmd.cwd; }
      if (u.content) { it.diffs = diffsOf(u.content); it.output = outputOf(u.content); }
      it.server = serverOf(u._meta) ?? it.server;
      if (!existing) addTool(s, it, parentOf(u._meta));
      return s;
    }
    case 'tool_call_update': {
      let it = find(s, 'tool', u.toolCallId);
      if (!it) {
        it = { kind: 'tool', id: String(u.toolCallId), title: String(u.title ?? u.toolCallId), status: 'pending', diffs: [], output: '' };
        addTool(s, it, parentOf(u._meta));
      }
      if (u.title) it.title = String(u.title);
      if (u.kind) it.toolKind = u.kind;
      if (u.status) it.status = u.status;
      it.server = serverOf(u._meta) ?? it.server;
      it.sandbox = sandboxOf(u._meta) ?? it.sandbox;
      it.program = programOf(u, it.program);
      if (u.rawInput !== undefined) { it.rawInput = u.rawInput; const c = commandOf(u.rawInput); it.command = c.command; it.cwd = c.cwd; }
      if (Array.isArray(u.content)) {
        const d = diffsOf(u.content);
        if (d.length) it.diffs = d;
        const o = outputOf(u.content);
        if (o) it.output = o;
      }
      return s;
    }
    case 'plan':
      s.plan = Array.isArray(u.entries) ? u.entries : [];
      return s;
    case 'available_commands_update':
      s.commands = Array.isArray(u.availableCommands) ? u.availableCommands : [];
      return s;
    case 'current_mode_update':
      s.mode = u.modeId ?? u.currentModeId ?? s.mode;
      for (const c of s.configOptions) if (c.category === 'mode' || c.id === 'mode') c.currentValue = s.mode;
      return s;
    case 'config_option_update':
      if (Array.isArray(u.configOptions)) { s.configOptions = u.configOptions; s.mode = modeFrom(u.configOptions) ?? s.mode; }
      return s;
    case 'session_info_update':
      if (typeof u.title === 'string') s.title = u.title;
      return s;
    case 'usage_update':
      // A model call that reported no usage (a stopped stream) says nothing about the context.
      if (typeof u.used === 'number' && !(u.used === 0 && s.usage?.used)) s.usage = { used: u.used, size: Number(u.size) || 0, cost: u.cost };
      else if (s.usage && u.cost !== undefined) s.usage = { ...s.usage, cost: u.cost };
      return s;
    case 'notice':
      s.items.push({
        kind: 'notice', id: `notice-${++s.seq}`,
        severity: (['info', 'warning', 'error'].includes(u.severity) ? u.severity : 'info'),
        title: String(u.title ?? ''), description: u.description,
      });
      return s;
    case 'compaction_update':
      if (u.status === 'completed' || u.status === 'done') {
        s.items.push({ kind: 'notice', id: `notice-${++s.seq}`, severity: 'info', title: l10n.t('Earlier conversation was summarised to free context.') });
      }
      return s;
  }
  return s;
}

/** Flattened choices of a select config option. */
export function optionValues(o: ConfigOption): ConfigOptionValue[] {
  const out: ConfigOptionValue[] = [];
  for (const x of o.options ?? []) {
    if ((x as any).options) out.push(...(x as any).options);
    else out.push(x as ConfigOptionValue);
  }
  return out;
}

/**
 * Permission buttons, in the order shown, mapped to the options agentd offered. A button is known
 * by this id everywhere (the webview's data-button, the notification's MessageItem, the answer
 * recorded in the transcript); its label is buttonLabel's, in the display language.
 */
export const PERMISSION_BUTTONS = ['allow_once', 'allow_sandboxed', 'allow_session', 'allow_always', 'deny'] as const;
export type PermissionButton = (typeof PERMISSION_BUTTONS)[number];

export function buttonLabel(b: PermissionButton): string {
  switch (b) {
    case 'allow_once': return l10n.t('Allow once');
    case 'allow_sandboxed': return l10n.t('Allow sandboxed programs for this session');
    case 'allow_session': return l10n.t('Allow for session');
    case 'allow_always': return l10n.t('Always allow');
    case 'deny': return l10n.t('Deny');
  }
}

export function optionForButton(options: PermissionOption[], button: PermissionButton): string | undefined {
  const byId = (id: string) => options.find((o) => o.optionId === id)?.optionId;
  const byKind = (k: string) => options.find((o) => o.kind === k)?.optionId;
  switch (button) {
    case 'allow_once': return byId('allow_once') ?? byKind('allow_once');
    case 'allow_sandboxed': return byId('allow_sandboxed_session');
    case 'allow_session':
      return byId('allow_session') ?? options.find((o) => o.kind === 'allow_always' && o.optionId !== 'allow_sandboxed_session' && (o._meta as any)?.['agentd/scope'] === 'session')?.optionId;
    case 'allow_always':
      return byId('allow_always') ?? options.find((o) => o.kind === 'allow_always' && (o._meta as any)?.['agentd/scope'] !== 'session')?.optionId;
    case 'deny': return byId('reject_once') ?? byKind('reject_once') ?? byId('reject_always') ?? byKind('reject_always');
  }
}

/** The buttons to show for a request: only those agentd offered an option for. */
export function buttonsFor(options: PermissionOption[]): PermissionButton[] {
  return PERMISSION_BUTTONS.filter((b) => optionForButton(options, b) !== undefined);
}

/** "Deny with feedback…": a `reject_once` carrying the user's correction; offered when agentd offers `reject_once`. */
export function denyWithFeedbackLabel(): string {
  return l10n.t('Deny with feedback…');
}

export function feedbackOption(options: PermissionOption[]): string | undefined {
  return options.find((o) => o.optionId === 'reject_once')?.optionId ?? options.find((o) => o.kind === 'reject_once')?.optionId;
}

/** The permission answer that denies with the user's correction (a blank one is a plain denial). */
export function feedbackOutcome(optionId: string, text: string): { outcome: Record<string, unknown> } {
  const t = text.trim();
  return { outcome: t ? { outcome: 'selected', optionId, _meta: { 'agentd/instruction': t } } : { outcome: 'selected', optionId } };
}

/**
 * A usage_update's cost {amount, currency} (the session's running total) as "0.0123 USD": to a
 * millionth so a small amount is not rounded away to 0, trailing zeros dropped. '' when agentd
 * sent no cost (the price is unknown): never a made-up 0. The currency loses control characters.
 */
export function costText(cost: unknown): string {
  if (!cost || typeof cost !== 'object') return '';
  const { amount, currency } = cost as { amount?: unknown; currency?: unknown };
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return '';
  let n = amount.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  if (n === '0' && amount > 0) n = amount.toPrecision(2);
  const cur = typeof currency === 'string' ? currency.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').slice(0, 12) : '';
  return `${n} ${cur || 'USD'}`;
}

/** "12.3k / 200k (6%)" for the context meter. */
export function usageText(u: { used: number; size: number } | undefined): string {
  if (!u) return '';
  const k = (n: number) => (n >= 1000 ? `${(n / 1000).toFixed(n >= 100000 ? 0 : 1)}k` : String(n));
  if (!u.size) return l10n.t('{0} tokens', k(u.used));
  return `${k(u.used)} / ${k(u.size)} (${Math.round((100 * u.used) / u.size)}%)`;
}
