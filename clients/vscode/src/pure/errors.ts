// What the user reads when something fails: a sentence about what happened and what to do, with
// the internal detail (JSON-RPC codes, the language client's "Request … failed with message:"
// wrapping, provider error bodies) kept apart as a secondary line, never as the headline. The
// sentences go through l10n.t (src/pure/l10n.ts); the detail is agentd's own text, as it came.
import * as l10n from '@vscode/l10n';

export interface UserError { title: string; detail?: string }

/** The turn's `_meta["agentd/error"]` kinds (providers.ErrorKind), as sentences. */
function kindText(kind: string): string | undefined {
  switch (kind) {
    case 'auth': return l10n.t('The model provider refused the API key. Run "agentd: Configure Provider" to set it.');
    case 'permission': return l10n.t('The model provider says this key may not use that model.');
    case 'rate_limit': return l10n.t('The model provider is rate limiting requests. Wait a moment and try again.');
    case 'quota': return l10n.t('The model provider says the account is out of quota or credit.');
    case 'overloaded': return l10n.t('The model provider is overloaded. Try again in a moment.');
    case 'context_overflow': return l10n.t("The conversation no longer fits the model's context. Compact it (/compact) or start a new chat.");
    case 'invalid_request': return l10n.t('The model provider refused the request.');
    case 'not_found': return l10n.t('The model provider does not know that model or URL. Check the provider settings.');
    case 'content_filter': return l10n.t("The model provider's content filter stopped the reply.");
    case 'server': return l10n.t('The model provider had an internal error. Try again.');
    case 'network': return l10n.t('agentd could not reach the model provider. Check the network and the base URL.');
    case 'cancelled': return l10n.t('Stopped.');
    default: return undefined;
  }
}

/** The turn-level error agentd reports in a prompt's result. */
export function turnError(meta: { kind?: unknown; message?: unknown; retryAfterMs?: unknown } | undefined): UserError | undefined {
  if (!meta || typeof meta !== 'object') return undefined;
  const kind = typeof meta.kind === 'string' ? meta.kind : '';
  const message = typeof meta.message === 'string' ? meta.message.trim() : '';
  let title = kindText(kind) ?? l10n.t('The model request failed.');
  const wait = Number(meta.retryAfterMs);
  if (kind === 'rate_limit' && wait > 0) title = l10n.t('The model provider is rate limiting requests. Try again in {0} s.', Math.ceil(wait / 1000));
  return { title, detail: message && message !== title ? message : undefined };
}

/** The language client's wrapping around a JSON-RPC error message. */
const WRAPPED = /^(?:Error:\s*)?Request [\w/$.]+ failed(?: unexpectedly)?(?: with message:)?\s*/i;

/** What the user was doing when a request failed, as the phrase that ends "Could not …". */
export type Doing = 'do that' | 'list the chats' | 'start a chat' | 'send the prompt' | 'finish the turn'
  | 'restore the checkpoint' | 'fork the conversation' | 'load the chat' | 'change the setting' | 'delete the chat';

function doingText(doing: Doing): string {
  switch (doing) {
    case 'do that': return l10n.t('do that');
    case 'list the chats': return l10n.t('list the chats');
    case 'start a chat': return l10n.t('start a chat');
    case 'send the prompt': return l10n.t('send the prompt');
    case 'finish the turn': return l10n.t('finish the turn');
    case 'restore the checkpoint': return l10n.t('restore the checkpoint');
    case 'fork the conversation': return l10n.t('fork the conversation');
    case 'load the chat': return l10n.t('load the chat');
    case 'change the setting': return l10n.t('change the setting');
    case 'delete the chat': return l10n.t('delete the chat');
  }
}

/** A failed request, a dead connection or a thrown error, as the user should read it. */
export function requestError(e: unknown, doing: Doing): UserError {
  const err = e as { code?: unknown; message?: unknown } | undefined;
  const code = typeof err?.code === 'number' ? err.code : undefined;
  const raw = String(err?.message ?? e ?? '').trim();
  const detail = raw.replace(WRAPPED, '').trim() || undefined;
  const what = doingText(doing);
  // A reloaded chat whose session is gone goes on in a new one by itself (chat.ts), so it asks for nothing.
  if (code === -32002 && doing === 'load the chat') return { title: l10n.t('Could not load the earlier conversation: agentd no longer has it. The chat goes on in a new session.'), detail };
  if (code === -32002) return { title: l10n.t('Could not {0}: agentd no longer has this chat. Start a new chat.', what), detail };
  if (code === -32800) return { title: l10n.t('Cancelled.') };
  if (/connection (?:got disposed|is closed|is disposed)|pending response rejected|client is not running|not running/i.test(raw)) {
    return { title: l10n.t('Could not {0}: agentd is not running. It restarts by itself; if it does not, run "agentd: Restart Daemon".', what), detail };
  }
  return { title: l10n.t('Could not {0}.', what), detail };
}
