// What the user reads when something fails: a sentence about what happened and what to do, with
// the internal detail (JSON-RPC codes, the language client's "Request … failed with message:"
// wrapping, provider error bodies) kept apart as a secondary line, never as the headline.

export interface UserError { title: string; detail?: string }

/** The turn's `_meta["agentd/error"]` kinds (providers.ErrorKind), as sentences. */
const KIND_TEXT: Record<string, string> = {
  auth: 'The model provider refused the API key. Run "agentd: Configure Provider" to set it.',
  permission: 'The model provider says this key may not use that model.',
  rate_limit: 'The model provider is rate limiting requests. Wait a moment and try again.',
  quota: 'The model provider says the account is out of quota or credit.',
  overloaded: 'The model provider is overloaded. Try again in a moment.',
  context_overflow: 'The conversation no longer fits the model\'s context. Compact it (/compact) or start a new chat.',
  invalid_request: 'The model provider refused the request.',
  not_found: 'The model provider does not know that model or URL. Check the provider settings.',
  content_filter: 'The model provider\'s content filter stopped the reply.',
  server: 'The model provider had an internal error. Try again.',
  network: 'agentd could not reach the model provider. Check the network and the base URL.',
  cancelled: 'Stopped.',
};

/** The turn-level error agentd reports in a prompt's result. */
export function turnError(meta: { kind?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined): UserError | undefined {
  if (!meta || typeof meta !== 'object') return undefined;
  const kind = typeof meta.kind === 'string' ? meta.kind : '';
  const message = typeof meta.message === 'string' ? meta.message.trim() : '';
  let title = KIND_TEXT[kind] ?? 'The model request failed.';
  const wait = Number(meta.retryAfterMs);
  if (kind === 'rate_limit' && wait > 0) title = `The model provider is rate limiting requests. Try again in ${Math.ceil(wait / 1000)} s.`;
  return { title, detail: message && message !== title ? message : undefined };
}

/** The language client's wrapping around a JSON-RPC error message. */
const WRAPPED = /^(?:Error:\s*)?Request [\w/$.]+ failed(?: unexpectedly)?(?: with message:)?\s*/i;

/** A failed request, a dead connection or a thrown error, as the user should read it. */
export function requestError(e: unknown, doing: string): UserError {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const code = typeof err?.code === 'number' ? err.code : undefined;
  const raw = String(err?.message ?? e ?? '').trim();
  const detail = raw.replace(WRAPPED, '').trim() || undefined;
  if (code === -32002) return { title: `Could not ${doing}: agentd no longer has this chat. Start a new chat.`, detail };
  if (code === -32800) return { title: 'Cancelled.' };
  if (/connection (?:got disposed|is closed|is disposed)|pending response rejected|client is not running|not running/i.test(raw)) {
    return { title: `Could not ${doing}: agentd is not running. It restarts by itself; if it does not, run "agentd: Restart Daemon".`, detail };
  }
  return { title: `Could not ${doing}.`, detail };
}
