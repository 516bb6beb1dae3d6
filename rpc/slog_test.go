package rpc

import (
	"context"
	"log/slog"
	"testing"

	lsp "go.lsp.dev/protocol"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// The protocol package logs through the slog logger in its context; those records must land in
// the daemon's zap core with their level and attributes.
func TestSlogRoutedIntoZap(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	ctx := lsp.WithLogger(context.Background(), slog.New(NewSlogHandler(zap.New(core).Core())))
	l := lsp.LoggerFromContext(ctx)
	l.Debug("dropped below the level")
	l.With("conn", 7).WithGroup("req").Warn("slow handler", "method", "initialize", "ms", 12)
	entries := logs.All()
	if len(entries) != 1 {
		t.Fatalf("%d entries: %+v", len(entries), entries)
	}
	e := entries[0]
	if e.Level != zapcore.WarnLevel || e.Message != "slow handler" {
		t.Fatalf("entry = %+v", e)
	}
	fields := e.ContextMap()
	if fields["conn"] != int64(7) || fields["req.method"] != "initialize" || fields["req.ms"] != int64(12) {
		t.Fatalf("fields = %v", fields)
	}
}
