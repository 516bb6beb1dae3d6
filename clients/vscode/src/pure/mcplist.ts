// The session's MCP servers as the MCP view lists them (from agentd's `agent/x/mcp/servers`): one
// node per server with its state, its tools below it. Each node says which server (and tool) it is
// about, so that actions on a server (a "Sign in") can be attached to its node.
import * as l10n from '@vscode/l10n';
import { visible } from './viewmodel';

export interface McpServerWire {
  name: string; type?: string; target?: string; state?: string; error?: string;
  /** A server that signs in: needed (offer Sign in) or signedIn (offer Sign out). */
  auth?: string;
  tools?: Array<{ name: string; description?: string; offered?: boolean }>;
  resources?: Array<{ uri: string; name?: string; title?: string; description?: string; mimeType?: string }>;
}

export interface McpNode {
  label: string;
  description?: string;
  tooltip?: string;
  /** codicon id */
  icon: string;
  server: string;
  tool?: string;
  /** On a server's node: it needs the user to sign in, or holds a sign-in's token. */
  auth?: 'needed' | 'signedIn';
  children: McpNode[];
}

/**
 * The node's contextValue, which the view's menus (package.json) match: a server that needs
 * sign-in gets "Sign in", one signed in "Sign out".
 */
export function mcpContextValue(n: McpNode): string | undefined {
  if (n.tool) return 'agentd.mcpTool';
  if (!n.server) return undefined;
  return n.auth ? `agentd.mcpServer.${n.auth}` : 'agentd.mcpServer';
}

const stateIcon: Record<string, string> = { ready: 'pass', starting: 'loading~spin', failed: 'error', down: 'warning' };

/** The view's nodes for servers; an empty session gets one node that says how to add one. */
export function mcpNodes(servers: McpServerWire[] | undefined): McpNode[] {
  if (!servers || servers.length === 0) {
    return [{ label: l10n.t('No MCP servers in this session'), description: l10n.t('add mcpServers to the settings'), icon: 'info', server: '', children: [] }];
  }
  return servers.map((s) => {
    const tools = (s.tools ?? []).map((t): McpNode => ({
      label: visible(t.name), description: t.offered ? l10n.t('offered') : l10n.t('not offered'),
      tooltip: t.description ? visible(t.description) : undefined, icon: t.offered ? 'tools' : 'circle-outline', server: s.name, tool: t.name, children: [],
    }));
    const n = s.resources?.length ?? 0;
    if (n > 0) tools.push({ label: l10n.t('{0} resources', n), description: l10n.t('mention one as @{0}:URI', visible(s.name)), icon: 'file', server: s.name, children: [] });
    const state = visible(s.state ?? '');
    const auth = s.auth === 'needed' || s.auth === 'signedIn' ? s.auth : undefined;
    const description = s.error ? `${state}: ${visible(s.error)}` : auth === 'signedIn' ? l10n.t('{0}, signed in', state) : state;
    return {
      label: visible(s.name), description,
      tooltip: `${visible(s.type ?? '')} ${visible(s.target ?? '')}`.trim(), icon: auth === 'needed' ? 'account' : stateIcon[s.state ?? ''] ?? 'circle-outline', server: s.name, auth, children: tools,
    };
  });
}
