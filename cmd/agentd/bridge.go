package main

import (
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/rpc"
)

// newBridge builds the editor bridge on the connection. TODO(wire): call editorbridge.New once
// the editorbridge package lands; until then the daemon serves the lifecycle and the providers
// API, and agent/session/* answer that the engine is not available.
var newBridge func(c *rpc.Conn, caps rpc.Capabilities, log *zap.Logger) rpc.Bridge
