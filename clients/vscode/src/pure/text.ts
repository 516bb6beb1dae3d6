// Text helpers for serving agent/fs/read_text_file.

/** Lines [line, line+limit) of text, 1-based, as ACP's read_text_file does; all when both are unset. */
export function sliceLines(text: string, line?: number | null, limit?: number | null): string {
  if (!line && !limit) return text;
  const lines = text.split('\n');
  const start = Math.max(0, (line ?? 1) - 1);
  const end = limit && limit > 0 ? start + limit : lines.length;
  return lines.slice(start, end).join('\n');
}

/**
 * A selection's 1-based first and last line from VS Code's 0-based positions: a selection that
 * ends at the start of a line (whole lines picked) does not include that line.
 */
export function selectionLines(startLine: number, endLine: number, endCharacter: number): { startLine: number; endLine: number } {
  const last = endCharacter === 0 && endLine > startLine ? endLine - 1 : endLine;
  return { startLine: startLine + 1, endLine: last + 1 };
}
