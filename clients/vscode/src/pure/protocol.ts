// The contract with agentd (docs/protocol.md) as one typed table: every method name the extension
// sends or serves, by direction, with its params and result types. Code names a method through
// the constants below and sends or serves it through Daemon.request/notify/onRequest/onNotification,
// which take their types from the maps, so a misspelt method or a wrong params shape is a type
// error rather than a silent -32601. test/unit/protocol.test.ts checks every name against
// docs/protocol.md and that no other file spells one out.

import type { ProgramEntry } from './sandbox';

/** A prompt's content (docs/protocol.md "ContentBlock"). */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string; _meta?: Record<string, unknown> }
  | { type: 'resource'; resource: { uri: string; text: string; mimeType?: string } }
  | { type: 'image'; mimeType: string; data: string };

/** A session config option as agentd describes it (mode, model, thought_level). */
export interface WireConfigOption {
  id: string;
  name: string;
  description?: string;
  category?: string;
  type?: string;
  currentValue?: string;
  options?: Array<{ value: string; name: string; description?: string } | { group?: string; name?: string; options: Array<{ value: string; name: string; description?: string }> }>;
}

export interface McpServer { name: string; [k: string]: unknown }
export type StopReason = 'end_turn' | 'max_tokens' | 'max_turn_requests' | 'refusal' | 'cancelled';
export interface Meta { _meta?: Record<string, any> }

export interface SessionParams { cwd: string; additionalDirectories?: string[]; mcpServers?: McpServer[] }
export interface SessionRef { sessionId: string }
export interface SessionInfo { sessionId: string; cwd: string; title?: string; updatedAt?: string }
export interface PermissionOptionWire { optionId: string; name?: string; kind?: string; _meta?: Record<string, unknown> }
export type PermissionOutcome =
  | { outcome: { outcome: 'selected'; optionId: string; _meta?: Record<string, unknown> } }
  | { outcome: { outcome: 'cancelled' } };

/** Client → agentd requests: method → {params, result}. */
export interface ClientRequests {
  'agent/session/new': { params: SessionParams; result: { sessionId: string; configOptions?: WireConfigOption[]; modes?: unknown } };
  'agent/session/load': { params: SessionRef & SessionParams; result: { configOptions?: WireConfigOption[]; modes?: unknown } };
  'agent/session/resume': { params: SessionRef & SessionParams; result: { configOptions?: WireConfigOption[] } };
  'agent/session/fork': { params: SessionRef & Partial<SessionParams>; result: { sessionId: string; configOptions?: WireConfigOption[]; modes?: unknown } };
  'agent/session/list': { params: { cwd?: string; cursor?: string }; result: { sessions: SessionInfo[]; nextCursor?: string } };
  'agent/session/close': { params: SessionRef; result: Record<string, never> };
  'agent/session/delete': { params: SessionRef; result: Record<string, never> };
  'agent/session/prompt': { params: SessionRef & { prompt: ContentBlock[] }; result: { stopReason: StopReason; usage?: unknown } & Meta };
  'agent/session/set_config_option': { params: SessionRef & { configId: string; value: string }; result: { configOptions: WireConfigOption[] } };
  'agent/x/session/steer': { params: SessionRef & { prompt: ContentBlock[] }; result: { accepted: boolean } };
  'agent/x/checkpoints/list': { params: SessionRef; result: { checkpoints: Array<{ checkpointId: string; createdAt: string; prompt: string; files: Array<{ path: string; change: string; from?: string }> }> } };
  'agent/x/checkpoints/restore': { params: SessionRef & { checkpointId: string; restore: 'files' | 'conversation' | 'both' }; result: { files: Array<{ path: string; restored: boolean; reason?: string }> } };
  'agent/x/grants/list': { params: SessionRef; result: { grants: GrantWire[] } };
  'agent/x/grants/revoke': { params: SessionRef & { grantId: string }; result: { revoked: boolean } };
  'agent/x/programs/list': { params: SessionRef; result: { programs: ProgramEntry[] } };
  'agent/x/programs/stop': { params: SessionRef & { programId: string }; result: ProgramEntry };
  'agent/x/mcp/servers': { params: SessionRef; result: { servers: import('./mcplist').McpServerWire[] } };
  'agent/mcp/signIn': { params: SessionRef & { server: string }; result: { server: string } };
  'agent/x/mcp/completeSignIn': { params: SessionRef & { server: string; callbackUrl: string }; result: { server: string } };
  'agent/x/mcp/signOut': { params: SessionRef & { server: string }; result: { server: string; hadTokens: boolean } };
  'agent/providers/list': { params: Record<string, never>; result: { providers: Array<{ providerId: string; apiType: string; baseUrl: string; model: string; keyStatus: string }> } };
  'agent/providers/set': { params: { providerId: string; apiType: string; baseUrl?: string; model?: string; headers?: Record<string, string> }; result: Record<string, never> };
  'agent/providers/test': { params: { providerId: string }; result: { ok: boolean; models: Array<string | { id?: string; name?: string }>; message: string } };
  // One-off inference outside any session (a selection's explanation) and speech to text.
  'agent/x/infer': { params: { system?: string; prompt: string; model?: string }; result: { text: string } };
  'agent/x/transcribe': { params: { audio: string; mimeType: string }; result: { text: string } };
  // LSP 3.18: agentd reads the document itself (agent/fs/read_text_file), so no text goes along.
  'textDocument/inlineCompletion': {
    params: { textDocument: { uri: string }; position: { line: number; character: number }; context: { triggerKind: 1 | 2 } };
    result: { items: Array<{ insertText: string | { kind: string; value: string }; range?: { start: { line: number; character: number }; end: { line: number; character: number } } }> } | Array<{ insertText: string | { kind: string; value: string } }> | null;
  };
}

/** A remembered permission answer (agent/x/grants/list): `label` is the sentence to show. */
export interface GrantWire {
  grantId: string;
  scope: 'session' | 'project';
  allow: boolean;
  tool: string;
  label: string;
}

/** Client → agentd notifications: method → params. */
export interface ClientNotifications {
  'agent/session/cancel': SessionRef;
  'workspace/didChangeConfiguration': { settings: unknown };
  'textDocument/didClose': { textDocument: { uri: string } };
}

/** agentd → client requests: method → {params, result}. */
export interface DaemonRequests {
  'agent/session/request_permission': { params: SessionRef & { toolCall: Record<string, any>; options: PermissionOptionWire[] }; result: PermissionOutcome };
  'agent/fs/read_text_file': { params: SessionRef & { path: string; line?: number; limit?: number }; result: { content: string } & Meta };
  'agent/x/dirty_buffers': { params: SessionRef; result: { buffers: Array<{ path: string; version: number }> } };
  'agent/x/diagnostics': { params: SessionRef & { paths?: string[] }; result: { items: Array<{ path: string; diagnostics: unknown[] }> } };
  'agent/x/secrets/get': { params: { key: string }; result: { value?: string } };
  'agent/x/workspace_symbols': { params: SessionRef & { query: string }; result: { symbols: unknown[] } };
  'agent/x/editor_state': { params: SessionRef; result: Record<string, unknown> };
  'agent/x/save_buffers': { params: SessionRef & { paths: string[] }; result: { saved: string[]; failed: Array<{ path: string; reason: string }> } };
  'agent/elicitation/create': { params: SessionRef & { toolCallId?: string; mode: string; message: string; requestedSchema?: unknown; url?: string; elicitationId?: string } & Meta; result: { action: 'accept'; content?: Record<string, unknown> } | { action: 'decline' } | { action: 'cancel' } };
}

/** agentd → client notifications: method → params. */
export interface DaemonNotifications {
  'agent/session/update': SessionRef & { update: { sessionUpdate: string; [k: string]: any } };
}

/** Client → agentd request names. */
export const ToDaemon = {
  sessionNew: 'agent/session/new',
  sessionLoad: 'agent/session/load',
  sessionResume: 'agent/session/resume',
  sessionFork: 'agent/session/fork',
  sessionList: 'agent/session/list',
  sessionClose: 'agent/session/close',
  sessionDelete: 'agent/session/delete',
  sessionPrompt: 'agent/session/prompt',
  sessionSetConfigOption: 'agent/session/set_config_option',
  sessionSteer: 'agent/x/session/steer',
  checkpointsList: 'agent/x/checkpoints/list',
  checkpointsRestore: 'agent/x/checkpoints/restore',
  grantsList: 'agent/x/grants/list',
  grantsRevoke: 'agent/x/grants/revoke',
  programsList: 'agent/x/programs/list',
  programsStop: 'agent/x/programs/stop',
  mcpServers: 'agent/x/mcp/servers',
  mcpSignIn: 'agent/mcp/signIn',
  mcpCompleteSignIn: 'agent/x/mcp/completeSignIn',
  mcpSignOut: 'agent/x/mcp/signOut',
  providersList: 'agent/providers/list',
  providersSet: 'agent/providers/set',
  providersTest: 'agent/providers/test',
  inlineCompletion: 'textDocument/inlineCompletion',
  infer: 'agent/x/infer',
  transcribe: 'agent/x/transcribe',
} as const satisfies Record<string, keyof ClientRequests>;

/** Client → agentd notification names. */
export const ToDaemonNote = {
  sessionCancel: 'agent/session/cancel',
  didChangeConfiguration: 'workspace/didChangeConfiguration',
  didClose: 'textDocument/didClose',
} as const satisfies Record<string, keyof ClientNotifications>;

/** agentd → client request names (workspace/applyEdit is served by the language client itself). */
export const FromDaemon = {
  requestPermission: 'agent/session/request_permission',
  readTextFile: 'agent/fs/read_text_file',
  dirtyBuffers: 'agent/x/dirty_buffers',
  diagnostics: 'agent/x/diagnostics',
  secretsGet: 'agent/x/secrets/get',
  workspaceSymbols: 'agent/x/workspace_symbols',
  saveBuffers: 'agent/x/save_buffers',
  editorState: 'agent/x/editor_state',
  elicitationCreate: 'agent/elicitation/create',
} as const satisfies Record<string, keyof DaemonRequests>;

/** agentd → client notification names. */
export const FromDaemonNote = {
  sessionUpdate: 'agent/session/update',
} as const satisfies Record<string, keyof DaemonNotifications>;

export type ClientRequest = keyof ClientRequests;
export type PermissionParams = DaemonRequests[typeof FromDaemon.requestPermission]['params'];
export type PermissionResult = DaemonRequests[typeof FromDaemon.requestPermission]['result'];
export type SessionUpdateParams = DaemonNotifications[typeof FromDaemonNote.sessionUpdate];
export type ClientNotification = keyof ClientNotifications;
export type DaemonRequest = keyof DaemonRequests;
export type DaemonNotification = keyof DaemonNotifications;
export type ParamsOf<M extends ClientRequest> = ClientRequests[M]['params'];
export type ResultOf<M extends ClientRequest> = ClientRequests[M]['result'];

/** Every method name in the table, for the contract test. */
export function allMethods(): string[] {
  return [ToDaemon, ToDaemonNote, FromDaemon, FromDaemonNote].flatMap((t) => Object.values(t) as string[]);
}
