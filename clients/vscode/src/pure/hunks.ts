// Line hunks between a file's text before an agent's turn and its text now, for reviewing the
// agent's edits hunk by hunk: keep one (it joins the baseline) or undo one (the editor's text
// gets the baseline's lines back). Lines keep their terminators, so joining them gives the
// exact text back (CRLF, a missing final newline).

export interface Hunk {
  /** First line (0-based) of the hunk in the old text, and the old lines it replaces. */
  oldStart: number;
  oldLines: string[];
  /** First line (0-based) of the hunk in the new text, and its new lines. */
  newStart: number;
  newLines: string[];
}

export function splitLines(t: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i < t.length) {
    const j = t.indexOf('\n', i);
    if (j < 0) { out.push(t.slice(i)); break; }
    out.push(t.slice(i, j + 1));
    i = j + 1;
  }
  return out;
}

/** Beyond this many cells the middle of a change is one hunk rather than a longest-common-subsequence walk. */
const MAX_CELLS = 4_000_000;

/** The hunks turning `a` into `b`, in order. */
export function hunks(a: string, b: string): Hunk[] {
  if (a === b) return [];
  const x = splitLines(a);
  const y = splitLines(b);
  let p = 0;
  while (p < x.length && p < y.length && x[p] === y[p]) p++;
  let q = 0;
  while (q < x.length - p && q < y.length - p && x[x.length - 1 - q] === y[y.length - 1 - q]) q++;
  const xs = x.slice(p, x.length - q);
  const ys = y.slice(p, y.length - q);
  const n = xs.length, m = ys.length;
  if (n * m > MAX_CELLS) return [{ oldStart: p, oldLines: xs, newStart: p, newLines: ys }];
  // L[i][j]: length of the longest common subsequence of xs[i..] and ys[j..].
  const w = m + 1;
  const L = new Uint16Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      L[i * w + j] = xs[i] === ys[j] ? L[(i + 1) * w + j + 1] + 1 : Math.max(L[(i + 1) * w + j], L[i * w + j + 1]);
    }
  }
  const out: Hunk[] = [];
  let cur: Hunk | undefined;
  let i = 0, j = 0;
  const open = () => (cur ??= { oldStart: p + i, oldLines: [], newStart: p + j, newLines: [] });
  while (i < n || j < m) {
    if (i < n && j < m && xs[i] === ys[j]) {
      if (cur) { out.push(cur); cur = undefined; }
      i++; j++;
    } else if (j >= m || (i < n && L[(i + 1) * w + j] >= L[i * w + j + 1])) {
      open().oldLines.push(xs[i++]);
    } else {
      open().newLines.push(ys[j++]);
    }
  }
  if (cur) out.push(cur);
  return out;
}

/** Where line `k` of `lines` starts, in characters. */
export function offsetOfLine(lines: string[], k: number): number {
  let o = 0;
  for (let i = 0; i < k && i < lines.length; i++) o += lines[i].length;
  return o;
}

/** The baseline once hunk `h` is kept: its old lines replaced by the new ones. */
export function keepHunk(baseline: string, h: Hunk): string {
  const lines = splitLines(baseline);
  lines.splice(h.oldStart, h.oldLines.length, ...h.newLines);
  return lines.join('');
}

/** The current text once hunk `h` is undone: its new lines replaced by the old ones. */
export function undoHunk(current: string, h: Hunk): string {
  const lines = splitLines(current);
  lines.splice(h.newStart, h.newLines.length, ...h.oldLines);
  return lines.join('');
}

/** Whether the hunks only take lines away (none adds or replaces a line): no new text is left to review. */
export function onlyRemovals(hs: Hunk[]): boolean {
  return hs.every((h) => h.newLines.length === 0);
}

/** "+2 −1" for a hunk. */
export function hunkStat(h: Hunk): string {
  return `+${h.newLines.length} −${h.oldLines.length}`;
}

/** One row of a compact diff: an unchanged line around a hunk, a removed or added line, or a gap. */
export interface DiffRow { kind: 'ctx' | 'del' | 'add' | 'gap'; text: string }

const eol = (l: string) => l.replace(/\r?\n$/, '');

/**
 * The rows of a compact diff of `a` to `b`, as the permission card shows it: each hunk's removed
 * and added lines with `context` unchanged lines either side, a gap row between hunks that do not
 * touch, and at most `maxRows` rows (then a last gap row says how many changed lines were left
 * out). Only the real hunks: two changes far apart are not one block with the lines between.
 */
export function diffRows(a: string, b: string, context = 1, maxRows = 80): { rows: DiffRow[]; hidden: number } {
  const x = splitLines(a);
  const hs = hunks(a, b);
  const rows: DiffRow[] = [];
  let hidden = 0;
  let shownTo = 0; // old lines before this index are already shown (or skipped by a gap)
  const push = (r: DiffRow) => { if (rows.length < maxRows) rows.push(r); else if (r.kind === 'del' || r.kind === 'add') hidden++; };
  hs.forEach((h, k) => {
    const from = Math.max(shownTo, h.oldStart - context);
    if (from > shownTo || (k === 0 && from > 0)) push({ kind: 'gap', text: '' });
    for (let i = from; i < h.oldStart; i++) push({ kind: 'ctx', text: eol(x[i]) });
    for (const l of h.oldLines) push({ kind: 'del', text: eol(l) });
    for (const l of h.newLines) push({ kind: 'add', text: eol(l) });
    const end = h.oldStart + h.oldLines.length;
    const next = hs[k + 1];
    const until = Math.min(x.length, end + context, next ? next.oldStart : x.length);
    for (let i = end; i < until; i++) push({ kind: 'ctx', text: eol(x[i]) });
    shownTo = until;
  });
  if (hs.length && shownTo < x.length) push({ kind: 'gap', text: '' });
  return { rows, hidden };
}

/** The hunk the editor's line `line` (0-based) is in: one of its new lines, or where its removed lines were. */
export function hunkAt(hs: Hunk[], line: number): Hunk | undefined {
  return hs.find((h) => (h.newLines.length ? line >= h.newStart && line < h.newStart + h.newLines.length : line === h.newStart));
}

/** The hunk after (`dir` 1) or before (-1) line `line`, going round at the file's end; undefined when there is none. */
export function hunkFrom(hs: Hunk[], line: number, dir: 1 | -1): Hunk | undefined {
  if (!hs.length) return undefined;
  const sorted = [...hs].sort((a, b) => a.newStart - b.newStart);
  if (dir === 1) return sorted.find((h) => h.newStart > line) ?? sorted[0];
  const here = hunkAt(sorted, line);
  return [...sorted].reverse().find((h) => h.newStart < line && h !== here) ?? sorted[sorted.length - 1];
}
