// `@`/`#` mentions in the chat input: finding the word being typed after the sigil, and turning a
// chosen file, symbol or selection into the content block that goes with the prompt.
import type { ContentBlock } from './protocol';

/** A piece of context shown as a chip above the input and sent with the prompt. */
export interface Chip {
  /** Stable across re-sends of the same thing (a file's URI, a selection's URI with its lines). */
  id: string;
  label: string;
  kind: 'file' | 'symbol' | 'selection' | 'image';
  block: ContentBlock;
}

/** The mention being typed at the caret: `@name` or `#name` starting a word. */
export function mentionAt(text: string, caret: number): { start: number; sigil: string; query: string } | undefined {
  const before = text.slice(0, caret);
  const m = /(^|\s)([@#])([\w./\-]*)$/.exec(before);
  if (!m) return undefined;
  return { start: before.length - m[3].length - 1, sigil: m[2], query: m[3] };
}

/** The input text after a mention was chosen: the typed `@que` becomes `@label ` at the caret. */
export function applyMention(text: string, caret: number, label: string): { text: string; caret: number } | undefined {
  const m = mentionAt(text, caret);
  if (!m) return undefined;
  const ins = `${m.sigil}${label} `;
  return { text: text.slice(0, m.start) + ins + text.slice(caret), caret: m.start + ins.length };
}

/** Chips in the order added, without two of the same id. */
export function addChip(chips: Chip[], c: Chip): Chip[] {
  return [...chips.filter((x) => x.id !== c.id), c];
}

/** The prompt's extra blocks from its chips. */
export function blocksOf(chips: Chip[]): ContentBlock[] {
  return chips.map((c) => c.block);
}

/** A file chip: agentd reads the file (the open buffer, unsaved text included) when the prompt runs. */
export function fileChip(uri: string, name: string): Chip {
  return { id: uri, label: name, kind: 'file', block: { type: 'resource_link', uri, name } };
}

/** A selection (or a symbol's range) chip: its text goes with the prompt as it is now. */
export function rangeChip(kind: 'selection' | 'symbol', uri: string, name: string, startLine: number, endLine: number, text: string): Chip {
  const id = `${uri}#L${startLine}-${endLine}`;
  const label = kind === 'symbol' ? name : `${name}:${startLine === endLine ? startLine : `${startLine}-${endLine}`}`;
  return { id, label, kind, block: { type: 'resource', resource: { uri: id, text, mimeType: 'text/plain' } } };
}
