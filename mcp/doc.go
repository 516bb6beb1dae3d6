// Package mcp owns agentd's side of the Model Context Protocol: the servers a session names
// (their configuration, parsed from ACP McpServer shapes), their connections through the official
// Go SDK's client (github.com/modelcontextprotocol/go-sdk, which negotiates the era: the
// 2026-07-28 revision's server/discover, then the 2025 initialize) over stdio (a child in its own
// process group, which agentd kills itself), Streamable HTTP or the old HTTP+SSE transport,
// each message bounded, and the tools they contribute, under the four rules of
// docs/protocol.md "MCP tool sources": reserved names are dropped, colliding names qualified, the
// set is one snapshot per turn, at most 12 tools with short one-line descriptions reach the
// model, and a server's failure costs one call. Every string a server supplies is cleaned here,
// once, before the session or the model sees it. Whether a call may run is the session's
// question; this package only runs it.
package mcp
