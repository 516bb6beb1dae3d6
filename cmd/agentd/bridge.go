package main

import (
	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/editorbridge"
	"github.com/agentd-dev/agentd/rpc"
	"github.com/agentd-dev/agentd/session"
)

// newBridge builds the editor bridge on the connection; the bridge's concrete client is handed
// on as a session.Client.
func newBridge(c *rpc.Conn, caps rpc.Capabilities, log *zap.Logger) rpc.Bridge {
	return bridge{editorbridge.New(c, caps, log)}
}

type bridge struct{ *editorbridge.Bridge }

func (b bridge) Client() session.Client { return b.Bridge.Client() }
