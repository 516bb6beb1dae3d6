// The MCP view: the session's servers, their state and tools (src/pure/mcplist.ts builds the
// nodes from agentd's `agent/x/mcp/servers`), refreshed by its title button.
import * as vscode from 'vscode';
import { mcpContextValue, mcpNodes, type McpNode, type McpServerWire } from './pure/mcplist';

export class McpView implements vscode.TreeDataProvider<McpNode> {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private nodes: McpNode[] = mcpNodes(undefined);

  constructor(private readonly list: () => Promise<McpServerWire[] | undefined>) {}

  async refresh() {
    try {
      this.nodes = mcpNodes(await this.list());
    } catch (e: any) {
      this.nodes = [{ label: vscode.l10n.t('Could not list the MCP servers'), description: String(e?.message ?? e), icon: 'error', server: '', children: [] }];
    }
    this.changed.fire();
  }

  getTreeItem(n: McpNode): vscode.TreeItem {
    const item = new vscode.TreeItem(n.label, n.children.length > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.description = n.description;
    item.tooltip = n.tooltip;
    item.iconPath = new vscode.ThemeIcon(n.icon);
    item.contextValue = mcpContextValue(n);
    return item;
  }

  getChildren(n?: McpNode): McpNode[] {
    return n ? n.children : this.nodes;
  }

  dispose() {
    this.changed.dispose();
  }
}
