// agentd's `agent/elicitation/create`: an MCP server's question during a tool call, asked with
// quick picks and input boxes, one field at a time (src/pure/elicit.ts orders and parses them).
// The user first chooses to answer or decline; Escape at any step cancels. For a link, agreeing
// lets agentd open it (window/showDocument); this side never opens it itself.
import * as vscode from 'vscode';
import { formFields, parseValue, type Field } from './pure/elicit';
import { visible } from './pure/viewmodel';

export interface ElicitParams {
  sessionId: string; toolCallId?: string; mode: string; message: string;
  requestedSchema?: unknown; url?: string; elicitationId?: string; _meta?: Record<string, unknown>;
}
export type ElicitResult = { action: 'accept'; content?: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' };

async function askField(f: Field, token: vscode.CancellationToken): Promise<{ value?: unknown; skip?: boolean } | undefined> {
  const optional = f.required ? '' : vscode.l10n.t(' (optional)');
  if (f.choices && f.choices.length > 0) {
    const items: Array<vscode.QuickPickItem & { value?: unknown; skip?: boolean }> = f.choices.map((c) => ({ label: c.label, value: c.value }));
    if (!f.required) items.unshift({ label: vscode.l10n.t('(leave empty)'), skip: true });
    const c = await vscode.window.showQuickPick(items, { title: f.title + optional, ignoreFocusOut: true }, token);
    if (!c) return undefined;
    return c.skip ? { skip: true } : { value: f.multi ? [c.value] : c.value };
  }
  if (f.type === 'boolean') {
    const yes = vscode.l10n.t('Yes');
    const c = await vscode.window.showQuickPick([yes, vscode.l10n.t('No')], { title: f.title + optional, ignoreFocusOut: true }, token);
    return c === undefined ? undefined : { value: c === yes };
  }
  const s = await vscode.window.showInputBox({
    title: f.title + optional, value: f.default === undefined ? '' : String(f.default), ignoreFocusOut: true,
    validateInput: (t) => parseValue(f, t).error,
  }, token);
  if (s === undefined) return undefined;
  const v = parseValue(f, s);
  return v.error ? undefined : v;
}

/** Asks the question; what the user did is the answer. */
export async function elicit(p: ElicitParams, token: vscode.CancellationToken): Promise<ElicitResult> {
  const server = visible(String(p._meta?.['agentd/mcpServer'] ?? 'MCP'));
  const message = visible(p.message ?? '');
  if (p.mode === 'url') {
    const open = { title: vscode.l10n.t('Open the link') };
    const decline = { title: vscode.l10n.t('Decline') };
    const c = await vscode.window.showInformationMessage(vscode.l10n.t('The MCP server {0} asks you to open {1}: {2}', server, visible(p.url ?? ''), message), { modal: true }, open, decline);
    return c === open ? { action: 'accept' } : c === decline ? { action: 'decline' } : { action: 'cancel' };
  }
  const answer = vscode.l10n.t('Answer');
  const c = await vscode.window.showQuickPick([answer, vscode.l10n.t('Decline')], { title: vscode.l10n.t('The MCP server {0} asks: {1}', server, message), ignoreFocusOut: true }, token);
  if (c === undefined) return { action: 'cancel' };
  if (c !== answer) return { action: 'decline' };
  const content: Record<string, unknown> = {};
  for (const f of formFields(p.requestedSchema)) {
    const v = await askField(f, token);
    if (!v) return { action: 'cancel' };
    if (!v.skip) content[f.name] = v.value;
  }
  return { action: 'accept', content };
}
