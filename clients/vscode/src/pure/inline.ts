// The items of an LSP InlineCompletionList (or a bare array) as VS Code needs them; anything
// malformed is dropped, whitespace-only text is no suggestion.
export interface InlineItem {
  text: string;
  snippet: boolean;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

const isPos = (p: any) => p && Number.isInteger(p.line) && Number.isInteger(p.character) && p.line >= 0 && p.character >= 0;

export function inlineItems(result: unknown): InlineItem[] {
  const raw = Array.isArray(result) ? result : result && typeof result === 'object' && Array.isArray((result as any).items) ? (result as any).items : [];
  const out: InlineItem[] = [];
  for (const it of raw) {
    if (!it || typeof it !== 'object') continue;
    const t = (it as any).insertText;
    const snippet = !!t && typeof t === 'object' && t.kind === 'snippet' && typeof t.value === 'string';
    const text = typeof t === 'string' ? t : snippet ? t.value : undefined;
    if (typeof text !== 'string' || !text.trim()) continue;
    const r = (it as any).range;
    out.push({ text, snippet, ...(r && isPos(r.start) && isPos(r.end) ? { range: { start: r.start, end: r.end } } : {}) });
  }
  return out;
}
