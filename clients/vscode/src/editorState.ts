// Serving agentd's reverse requests from VS Code's real state: open buffers (unsaved changes
// included), dirty documents, diagnostics, workspace symbols, saving buffers and secrets.
// Every handler answers with a result or a JSON-RPC error; none may throw into the host.
import * as vscode from 'vscode';
import { promises as fs } from 'fs';
import * as path from 'path';
import { Code2ProtocolConverter, ResponseError } from 'vscode-languageclient/node';
import { Keys } from './keys';
import { selectionLines, sliceLines } from './pure/text';

const NOT_FOUND = -32002;
const INVALID_PARAMS = -32602;

function openDocument(fsPath: string): vscode.TextDocument | undefined {
  const want = path.normalize(fsPath);
  return vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === 'file' && path.normalize(d.uri.fsPath) === want);
}


export async function readTextFile(params: any): Promise<any> {
  const p = params?.path;
  if (typeof p !== 'string' || !path.isAbsolute(p)) return new ResponseError(INVALID_PARAMS, `path must be absolute: ${p}`);
  const doc = openDocument(p);
  if (doc) {
    return {
      content: sliceLines(doc.getText(), params.line, params.limit),
      _meta: { 'agentd/version': doc.version, 'agentd/dirty': doc.isDirty },
    };
  }
  try {
    const text = await fs.readFile(p, 'utf8');
    return { content: sliceLines(text, params.line, params.limit) };
  } catch (e: any) {
    if (e?.code === 'ENOENT' || e?.code === 'ENOTDIR') return new ResponseError(NOT_FOUND, `file not found: ${p}`);
    if (e?.code === 'EISDIR') return new ResponseError(INVALID_PARAMS, `is a directory: ${p}`);
    return new ResponseError(-32603, `cannot read ${p}: ${e?.message ?? e}`);
  }
}

export function dirtyBuffers(): any {
  return {
    buffers: vscode.workspace.textDocuments
      .filter((d) => !d.isClosed && d.isDirty && d.uri.scheme === 'file')
      .map((d) => ({ path: d.uri.fsPath, version: d.version })),
  };
}

// Diagnostics and symbols go out in LSP shapes through the language client's own converter
// (c2p), which also carries what a hand-written mapping would drop (tags, related information,
// code descriptions).

export function diagnostics(params: any, c2p: Code2ProtocolConverter): any {
  const items: any[] = [];
  if (Array.isArray(params?.paths) && params.paths.length) {
    for (const p of params.paths) {
      if (typeof p !== 'string') continue;
      items.push({ path: p, diagnostics: c2p.asDiagnosticsSync(vscode.languages.getDiagnostics(vscode.Uri.file(p))) });
    }
  } else {
    for (const [uri, ds] of vscode.languages.getDiagnostics()) {
      if (uri.scheme !== 'file' || !ds.length) continue;
      items.push({ path: uri.fsPath, diagnostics: c2p.asDiagnosticsSync(ds) });
    }
  }
  return { items };
}

export async function workspaceSymbols(params: any, c2p: Code2ProtocolConverter): Promise<any> {
  const query = typeof params?.query === 'string' ? params.query : '';
  let found: vscode.SymbolInformation[] | undefined;
  try {
    found = await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', query);
  } catch {
    found = [];
  }
  return {
    symbols: (found ?? []).slice(0, 500).map((s) => ({
      name: s.name,
      kind: c2p.asSymbolKind(s.kind),
      tags: s.tags?.length ? c2p.asSymbolTags(s.tags) : undefined,
      containerName: s.containerName || undefined,
      location: c2p.asLocation(s.location),
    })),
  };
}

export async function saveBuffers(params: any): Promise<any> {
  const saved: string[] = [];
  const failed: Array<{ path: string; reason: string }> = [];
  for (const p of Array.isArray(params?.paths) ? params.paths : []) {
    if (typeof p !== 'string') continue;
    const doc = openDocument(p);
    if (!doc || !doc.isDirty) { saved.push(p); continue; }
    try {
      if (await doc.save()) saved.push(p);
      else failed.push({ path: p, reason: 'VS Code did not save the file' });
    } catch (e: any) {
      failed.push({ path: p, reason: String(e?.message ?? e) });
    }
  }
  return { saved, failed };
}

/** agent/x/secrets/get: the key stored for the origin named (`agentd.apiKey.<origin>`), else nothing. */
export async function getSecret(keys: Keys, params: any): Promise<any> {
  const key = typeof params?.key === 'string' ? params.key : '';
  if (!key) return new ResponseError(INVALID_PARAMS, 'key is required');
  const value = await keys.serve(key);
  return value ? { value } : {};
}

/** Most of a selection's text sent along; a longer one is cut (agentd has the file anyway). */
const MAX_SELECTION_TEXT = 16 * 1024;

/**
 * agent/x/editor_state: the active file, its selection (1-based lines, the text when short
 * enough) and the files open in tabs, all absolute paths, so agentd can put them in the prompt.
 */
export function editorState(): any {
  const files: string[] = [];
  const add = (u: vscode.Uri | undefined) => {
    if (u && u.scheme === 'file' && !files.includes(u.fsPath)) files.push(u.fsPath);
  };
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      const input: any = t.input;
      if (input instanceof vscode.TabInputText) add(input.uri);
      else if (input instanceof vscode.TabInputTextDiff) add(input.modified);
    }
  }
  const out: any = { openFiles: files };
  const ed = vscode.window.activeTextEditor;
  if (ed && ed.document.uri.scheme === 'file') {
    out.activeFile = ed.document.uri.fsPath;
    if (!files.includes(out.activeFile)) files.unshift(out.activeFile);
    const sel = ed.selection;
    if (!sel.isEmpty) {
      const { startLine, endLine } = selectionLines(sel.start.line, sel.end.line, sel.end.character);
      const text = ed.document.getText(sel);
      out.selection = { path: out.activeFile, startLine, endLine, ...(text.length <= MAX_SELECTION_TEXT ? { text } : {}) };
    }
  }
  return out;
}
