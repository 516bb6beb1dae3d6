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
