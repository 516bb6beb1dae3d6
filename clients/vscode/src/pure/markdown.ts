// The chat's Markdown, and the renderer of a reply that grows while it streams (issue 33 item 3).
// marked renders it with the model's HTML shown as text (never interpreted), links without a
// target, images as their alt text, and fenced code highlighted by highlight.js. StreamMarkdown
// renders a growing text incrementally: the blocks before the last one are finished and rendered
// once; only the last, still open, block is rendered again as it grows; a fenced code block grows
// by appending its new lines, highlighted, without highlighting what came before again: each
// appended part is whole lines, each with its line end, so that the DOM can give every part a
// box of its own (a 2,000-line block is then not one paragraph laid out again per frame). Its
// output is a list of operations for the DOM (the webview's LiveMarkdown applies them), so that
// the unit tests can check it against a whole render without a browser.
import * as l10n from '@vscode/l10n';
import { Marked, Token, Tokens } from 'marked';
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

export function esc(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch]!));
}

/** A fence's info string's language, as the code block's header names it ('' for none). */
function langOf(info: string | undefined): string {
  return (info ?? '').trim().split(/\s+/)[0].toLowerCase();
}

/** `code` as HTML: highlighted when highlight.js knows `lang`, else escaped. */
export function highlightCode(code: string, lang: string): string {
  try {
    return lang && hljs.getLanguage(lang) ? hljs.highlight(code, { language: lang, ignoreIllegals: true }).value : esc(code);
  } catch { return esc(code); }
}

/** A code block's frame around `body` (its highlighted HTML): the header with Copy, Insert, Apply. */
export function codeFrame(lang: string, body: string): string {
  return `<div class="code"><div class="code-head"><span>${esc(lang || 'text')}</span><span class="code-actions"><button class="copy" data-copy title="${esc(l10n.t('Copy to the clipboard'))}">${esc(l10n.t('Copy'))}</button><button class="copy" data-code-act="insert" title="${esc(l10n.t('Insert at the cursor in the active editor'))}">${esc(l10n.t('Insert'))}</button><button class="copy" data-code-act="apply" title="${esc(l10n.t("Replace the active editor's selection (or, with nothing selected, the whole file) in one undoable edit"))}">${esc(l10n.t('Apply'))}</button></span></div><pre><code class="hljs">${body}</code></pre></div>`;
}

const md = new Marked({ gfm: true, breaks: false });
md.use({
  renderer: {
    // Raw HTML from the model is shown as text, never interpreted.
    html(token: Tokens.HTML | Tokens.Tag) { return esc(token.text); },
    code(token: Tokens.Code) {
      const lang = langOf(token.lang);
      return codeFrame(lang, highlightCode(token.text, lang));
    },
    link(token: Tokens.Link) { return `<a title="${esc(token.href)}">${esc(token.text)}</a>`; },
    image(token: Tokens.Image) { return `<span class="img-alt">${esc(l10n.t('[image: {0}]', token.text || token.href))}</span>`; },
  },
});

/** Markdown as HTML, in one piece. */
export function renderMarkdown(text: string): string {
  try { return md.parse(text, { async: false }) as string; } catch { return `<p>${esc(text)}</p>`; }
}

function renderTokens(tokens: Token[], raw: string): string {
  if (!tokens.length) return '';
  try { return md.parser(tokens); } catch { return `<p>${esc(raw)}</p>`; }
}

/** Characters a streaming reply's next frame shows at most when more waits (see revealTo). */
export const REVEAL_ALL = 64;

/**
 * How much of a reply the next frame shows, `shown` of its `length` characters shown so far: a
 * finished reply all of it; a streaming one half of what waits, and all of it once REVEAL_ALL
 * characters or fewer wait. A chunk is then on screen within three frames (about 50 ms) of its
 * arrival, and a burst still unrolls over a few frames instead of landing whole. (A quarter per
 * frame, down to 4 characters, took 12 frames for a 160-character chunk: the last chunk's text
 * was on screen a fifth of a second after it came, unless the turn's end came first.)
 */
export function revealTo(shown: number, length: number, streaming: boolean): number {
  const rest = length - shown;
  if (rest <= 0) return Math.max(0, length);
  if (!streaming || rest <= REVEAL_ALL) return length;
  return shown + Math.max(REVEAL_ALL, Math.ceil(rest / 2));
}

/** What the DOM does with a step of a streamed reply, in order. */
export type Op =
  /** Append a finished block's HTML after the finished blocks (before the open one). */
  | { op: 'block'; html: string }
  /** A fenced code block starts: append its frame (an empty `code` element) after the finished blocks. */
  | { op: 'codeOpen'; html: string }
  /** Append HTML to the open code block's `code`: it is final, whole lines each ending in '\n'. */
  | { op: 'code'; html: string }
  /** The open code block's last lines as they stand (from a line's start): they replace the ones shown before. */
  | { op: 'codeTail'; html: string }
  /** The open code block is finished: it is one of the finished blocks now. */
  | { op: 'codeClose' }
  /** The open block as it stands (after the finished ones and any code block): replaces the one shown before. */
  | { op: 'tail'; html: string };

const OPEN_FENCE = /^(`{3,}|~{3,})([^\n]*)\n/;

interface OpenCode {
  fence: string;
  lang: string;
  /** Where the code's text starts in the source. */
  start: number;
  /** Where the code's text not yet appended as final starts: at a line start. */
  committed: number;
  /** The first line not yet checked for the closing fence. */
  scan: number;
}

/**
 * Renders a growing Markdown text as it streams. update(text) takes the text so far (the same
 * text as before, with more at its end) and says what to change in the DOM.
 */
export class StreamMarkdown {
  /** The source (line ends made '\n') so far. */
  private src = '';
  /** The source rendered as finished blocks (or as the open code block's start). */
  private done = 0;
  private code: OpenCode | undefined;

  /**
   * The operations that bring the DOM from the text before to `text`. `final`: the text is
   * complete (an open code block or a last line without its line end is finished as it stands).
   */
  update(text: string, final = false): Op[] {
    // marked reads CR and CR LF as LF; a CR at the end reads the same once its LF follows.
    this.src = text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
    const ops: Op[] = [];
    for (;;) {
      if (this.code) {
        if (!this.growCode(ops, final)) { ops.push({ op: 'tail', html: '' }); return ops; }
        continue;
      }
      const rest = this.src.slice(this.done);
      const fence = OPEN_FENCE.exec(rest);
      if (fence && !(fence[1][0] === '`' && fence[2].includes('`'))) {
        const start = this.done + fence[0].length;
        this.code = { fence: fence[1], lang: langOf(fence[2]), start, committed: start, scan: start };
        ops.push({ op: 'codeOpen', html: codeFrame(this.code.lang, '') });
        continue;
      }
      let tokens: Token[];
      try { tokens = md.lexer(rest); } catch { ops.push({ op: 'tail', html: `<p>${esc(rest)}</p>` }); return ops; }
      let last = tokens.length - 1;
      while (last >= 0 && tokens[last].type === 'space') last--;
      // Every block before the last one is finished: nothing after it can change how it reads.
      let cut = Math.max(0, last);
      // A fenced code block at column 0 that is the last block is grown line by line instead.
      const lastTok = last >= 0 ? tokens[last] : undefined;
      const fencedLast = lastTok?.type === 'code' && /^(`{3,}|~{3,})/.test(lastTok.raw);
      if (final && !fencedLast) cut = tokens.length;
      if (cut > 0) {
        const head = tokens.slice(0, cut);
        const raw = head.map((t) => t.raw).join('');
        // The blocks' sources must be the text's start, or offsets would drift: render whole then.
        if (!rest.startsWith(raw)) { ops.push({ op: 'tail', html: renderTokens(tokens, rest) }); return ops; }
        ops.push({ op: 'block', html: renderTokens(head, raw) });
        this.done += raw.length;
        if (fencedLast) continue;
        if (cut === tokens.length) { ops.push({ op: 'tail', html: '' }); return ops; }
      }
      const open = tokens.slice(cut);
      ops.push({ op: 'tail', html: renderTokens(open, rest) });
      return ops;
    }
  }

  /**
   * Appends the open code block's new complete lines, and shows its partial rest. Returns true
   * when the block closed (the loop goes on after it), false when it is still open.
   */
  private growCode(ops: Op[], final: boolean): boolean {
    const c = this.code!;
    const src = this.src;
    // Look for the closing fence among the lines not checked yet.
    let closeAt = -1;
    let closeEnd = -1;
    let lineStart = c.scan;
    for (;;) {
      const nl = src.indexOf('\n', lineStart);
      if (nl < 0 && !final) break;
      const end = nl < 0 ? src.length : nl;
      if (end === lineStart && nl < 0) break;
      const line = src.slice(lineStart, end);
      const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
      if (m && m[1][0] === c.fence[0] && m[1].length >= c.fence.length) {
        closeAt = lineStart;
        closeEnd = nl < 0 ? src.length : nl + 1;
        break;
      }
      if (nl < 0) break;
      lineStart = nl + 1;
    }
    c.scan = closeAt >= 0 ? closeAt : lineStart;
    if (closeAt >= 0 || final) {
      // The code's text is its lines without the last line end (as marked gives it).
      const end = closeAt >= 0 ? Math.max(c.start, closeAt - 1) : src.length;
      const body = src.slice(c.committed, end);
      if (body) ops.push({ op: 'code', html: highlightCode(body, c.lang) });
      ops.push({ op: 'codeTail', html: '' }, { op: 'codeClose' });
      this.done = closeAt >= 0 ? closeEnd : src.length;
      this.code = undefined;
      return closeAt >= 0 && this.done < src.length;
    }
    // Still open: the complete lines with their line ends, but for the last complete one, which
    // stays open with the partial rest: marked's code text has no line end after its last line,
    // so the block's closing appends that last line without its '\n'.
    const lastNl = src.lastIndexOf('\n');
    const prevNl = lastNl > c.committed ? src.lastIndexOf('\n', lastNl - 1) : -1;
    const completeEnd = prevNl >= c.committed ? prevNl + 1 : c.committed;
    if (completeEnd > c.committed) {
      const part = src.slice(c.committed, completeEnd);
      const r = this.highlightPart(part, c.lang);
      // Appended as final only where the highlighter is back in its initial state (not inside a
      // comment or a string that goes on): the next part can then be highlighted on its own.
      if (r.clean) { ops.push({ op: 'code', html: r.html }); c.committed = completeEnd; }
    }
    const pending = src.slice(c.committed);
    ops.push({ op: 'codeTail', html: pending ? highlightCode(pending, c.lang) : '' });
    return false;
  }

  private highlightPart(code: string, lang: string): { html: string; clean: boolean } {
    if (!lang || !hljs.getLanguage(lang)) return { html: esc(code), clean: true };
    try {
      const r = hljs.highlight(code, { language: lang, ignoreIllegals: true });
      return { html: r.value, clean: r._top === rootMode(lang) };
    } catch { return { html: esc(code), clean: true }; }
  }
}

const roots = new Map<string, unknown>();
function rootMode(lang: string): unknown {
  if (!roots.has(lang)) roots.set(lang, hljs.highlight('', { language: lang, ignoreIllegals: true })._top);
  return roots.get(lang);
}
