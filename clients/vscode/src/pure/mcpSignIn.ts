// The MCP sign-in's pure parts (docs/protocol.md "MCP sign-in", "Signing in from a remote
// editor"): which notice asks for it, which pages may be opened for it and how, and what a
// pasted callback address must look like before it goes to agentd (which checks it for real).
import * as l10n from '@vscode/l10n';

/** The _meta key of the notice that says an MCP server needs the user to sign in. */
export const MCP_SIGN_IN_META = 'agentd/mcpSignIn';

/**
 * The server a sign-in notice names, or undefined for any other update (a notice without the
 * key, a malformed one, another kind of update).
 */
export function signInServer(p: { sessionId?: unknown; update?: unknown } | undefined): string | undefined {
  const u: any = p?.update;
  if (!u || typeof u !== 'object' || u.sessionUpdate !== 'notice' || typeof u._meta !== 'object' || u._meta === null) return undefined;
  const m = u._meta[MCP_SIGN_IN_META];
  return m && typeof m === 'object' && typeof m.server === 'string' && m.server !== '' && typeof p?.sessionId === 'string' ? m.server : undefined;
}

/** Only a web page is opened for a sign-in: http(s), never file:, javascript: or a custom scheme. */
export function isWebURL(uri: string): boolean {
  return /^https?:\/\/[^/]/i.test(uri);
}

/**
 * The origin (with a trailing slash) of a loopback http(s) URL, as VS Code's hosts recognize one
 * to forward or proxy (localhost, 127.0.0.1, 0.0.0.0 with a port); undefined for any other URL.
 */
export function loopbackOrigin(uri: string): string | undefined {
  const m = /^(https?):\/\/(localhost|127\.0\.0\.1|0\.0\.0\.0):(\d+)(?=[/?#]|$)/i.exec(uri);
  return m ? `${m[1].toLowerCase()}://${m[2].toLowerCase()}:${m[3]}/` : undefined;
}

/**
 * What to open for a loopback sign-in page, given what the host's asExternalUri made of its
 * origin: the URL itself when the host leaves the origin alone (a local window) or maps it whole
 * (a port forward: the host does the same when it opens it); when the host turned the origin into
 * a proxy address of its own (code-server: http://HOST/proxy/PORT/, path and query dropped), that
 * address with the page's path, query and fragment put back, so that the browser reaches the
 * page itself, not the proxy's root.
 */
export function pageBehindProxy(uri: string, origin: string, resolvedOrigin: string): string {
  if (resolvedOrigin === origin || !isWebURL(resolvedOrigin) || loopbackOrigin(uri) !== origin) return uri;
  let rest = uri.slice(origin.length - 1); // "/authorize?…", "?…" or ""
  if (rest.startsWith('/')) rest = rest.slice(1);
  const base = resolvedOrigin.replace(/[?#].*$/, '');
  return (base.endsWith('/') ? base : base + '/') + rest;
}

/**
 * Why a pasted address cannot be a sign-in's answer, or undefined when it may be one: agentd
 * makes the real checks (its state, its callback address, the issuer); this only catches what
 * is plainly something else, while the user is still typing.
 */
export function pastedAddressProblem(text: string): string | undefined {
  const s = text.trim();
  if (s === '') return l10n.t('Paste the whole address from the browser\'s address bar.');
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return l10n.t('That is not an address: paste the whole address from the browser\'s address bar (it starts with http://).');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return l10n.t('That is not an address: paste the whole address from the browser\'s address bar (it starts with http://).');
  if (!u.searchParams.get('state') || (!u.searchParams.get('code') && !u.searchParams.get('error'))) {
    return l10n.t('That address carries no sign-in answer (no code and state): paste the address the browser ended on after you approved.');
  }
  return undefined;
}

/**
 * Whether the browser may be on another machine than agentd, so that its redirect to agentd's
 * loopback callback may go nowhere: a remote window (Remote SSH, a container, WSL, a tunnel) or a
 * workbench served to a browser (code-server, vscode.dev).
 */
export function browserMayBeElsewhere(remoteName: string | undefined, webUI: boolean): boolean {
  return webUI || (remoteName !== undefined && remoteName !== '');
}
