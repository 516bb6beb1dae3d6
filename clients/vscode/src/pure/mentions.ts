// `@`/`#` mentions in the chat input: finding the word being typed after the sigil, and turning a
// chosen file, symbol or selection into the content block that goes with the prompt.
import type { ContentBlock } from './protocol';
import { visible } from './viewmodel';

/** A piece of context shown as a chip above the input and sent with the prompt. */
export interface Chip {
  /** Stable across re-sends of the same thing (a file's URI, a selection's URI with its lines). */
  id: string;
  label: string;
  kind: 'file' | 'symbol' | 'selection' | 'image' | 'mcp';
  block: ContentBlock;
}

/** The mention being typed at the caret: `@name` or `#name` starting a word. */
export function mentionAt(text: string, caret: number): { start: number; sigil: string; query: string } | undefined {
  const before = text.slice(0, caret);
  // `:` and the other URI characters let `@server:scheme://path?q=1` be one mention.
  const m = /(^|\s)([@#])([\w./\-:%~?=&+]*)$/.exec(before);
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

/** An MCP server's resource chip (`@server:uri`): agentd reads it on that server when the prompt runs. */
export function mcpResourceChip(server: string, uri: string, name?: string): Chip {
  return {
    id: `mcp:${server}:${uri}`, label: `${server}:${uri}`, kind: 'mcp',
    block: { type: 'resource_link', uri, name: name || uri, _meta: { 'agentd/mcpServer': server } },
  };
}

/** What a server lists as its resources, as far as a mention needs it. */
export interface McpResourceList { name: string; resources?: Array<{ uri: string; name?: string; title?: string }> }

/**
 * The `@server:uri` mentions matching query (a prefix of `server:uri`, or part of it), at most
 * max. A server's name and uri are its own text: one with a space or a control character cannot
 * be typed as one word, so it is not offered; the detail is shown escaped by the view.
 */
export function mcpMentions(servers: McpResourceList[] | undefined, query: string, max = 20): Array<{ chip: Chip; detail: string }> {
  const out: Array<{ chip: Chip; detail: string }> = [];
  const q = query.toLowerCase();
  const word = /^[^\s\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+$/u;
  for (const s of servers ?? []) {
    if (typeof s?.name !== 'string' || !word.test(s.name)) continue;
    for (const r of Array.isArray(s.resources) ? s.resources : []) {
      if (typeof r?.uri !== 'string' || !word.test(r.uri)) continue;
      const label = `${s.name}:${r.uri}`;
      if (q && !label.toLowerCase().includes(q)) continue;
      const title = typeof r.title === 'string' && r.title ? r.title : typeof r.name === 'string' ? r.name : '';
      out.push({ chip: mcpResourceChip(s.name, r.uri, typeof r.name === 'string' ? r.name : undefined), detail: visible(title) });
      if (out.length >= max) return out;
    }
  }
  return out;
}
