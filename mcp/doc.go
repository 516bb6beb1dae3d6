// Package mcp owns agentd's side of the Model Context Protocol: the servers a session names
// (their configuration, parsed from ACP McpServer shapes), their connections through its own
// small client (mcp/internal/client, which replaced the official Go SDK for its cost at every
// start; the SDK stays the reference the tests run against) over stdio (a child in its own
// process group) or Streamable HTTP, and the tools they contribute, under the four rules of
// docs/protocol.md "MCP tool sources": reserved names are dropped, colliding names qualified, the
// set is one snapshot per turn, at most 12 tools with short one-line descriptions reach the
// model, and a server's failure costs one call. Every string a server supplies is cleaned here,
// once, before the session or the model sees it. Whether a call may run is the session's
// question; this package only runs it.
package mcp
