// An MCP server's question during a tool call (agentd's `agent/elicitation/create`): the form's
// fields in the order they are asked, and the typed text of one turned into its value. The host
// part (src/elicit.ts) asks them with quick picks and input boxes.
import * as l10n from '@vscode/l10n';
import { visible } from './viewmodel';

export interface Field {
  name: string;
  title: string;
  required: boolean;
  type: string;
  /** For a choice: the values and their labels. */
  choices?: Array<{ value: unknown; label: string }>;
  default?: unknown;
  multi: boolean;
}

/** The fields of a requested schema: required ones first, then by name; every label cleaned. */
export function formFields(schema: unknown): Field[] {
  const s = (schema && typeof schema === 'object' ? schema : {}) as Record<string, any>;
  const props = s.properties && typeof s.properties === 'object' ? s.properties as Record<string, any> : {};
  const required = new Set<string>(Array.isArray(s.required) ? s.required.filter((x: unknown) => typeof x === 'string') : []);
  const out: Field[] = [];
  for (const [name, p] of Object.entries(props)) {
    if (!p || typeof p !== 'object') continue;
    const desc = typeof p.description === 'string' && p.description ? ` (${visible(p.description)})` : '';
    const f: Field = { name, title: visible(String(p.title ?? name)) + desc, required: required.has(name), type: String(p.type ?? 'string'), multi: p.type === 'array', default: p.default };
    const en = Array.isArray(p.enum) ? p.enum : p.items && Array.isArray(p.items.enum) ? p.items.enum : undefined;
    if (en) f.choices = en.map((v: unknown, i: number) => ({ value: v, label: visible(String(Array.isArray(p.enumNames) ? p.enumNames[i] ?? v : v)) }));
    const alt = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : p.items && Array.isArray(p.items.anyOf) ? p.items.anyOf : undefined;
    if (alt) f.choices = alt.filter((o: any) => o && 'const' in o).map((o: any) => ({ value: o.const, label: visible(String(o.title ?? o.const)) }));
    out.push(f);
  }
  return out.sort((a, b) => (a.required === b.required ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.required ? -1 : 1));
}

/** The value of a text or number field's input, or the message that says why it is not one. */
export function parseValue(f: Field, text: string): { value?: unknown; error?: string; skip?: boolean } {
  if (text === '' && !f.required) return { skip: true };
  if (f.type === 'number' || f.type === 'integer') {
    const n = Number(text.trim());
    if (text.trim() === '' || !Number.isFinite(n)) return { error: l10n.t('{0} must be a number', f.title) };
    if (f.type === 'integer' && !Number.isInteger(n)) return { error: l10n.t('{0} must be a whole number', f.title) };
    return { value: n };
  }
  if (text === '' && f.required) return { error: l10n.t('{0} is required', f.title) };
  return { value: text };
}
