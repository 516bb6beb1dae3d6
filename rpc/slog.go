package rpc

import (
	"context"
	"log/slog"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// slogHandler routes log/slog records (go.lsp.dev/protocol logs through slog) into the
// daemon's zap core, so there is one log, one level and one destination.
type slogHandler struct {
	core   zapcore.Core
	fields []zapcore.Field
	group  string
}

// NewSlogHandler returns a slog.Handler writing to core.
func NewSlogHandler(core zapcore.Core) slog.Handler { return &slogHandler{core: core} }

func zapLevel(l slog.Level) zapcore.Level {
	switch {
	case l >= slog.LevelError:
		return zapcore.ErrorLevel
	case l >= slog.LevelWarn:
		return zapcore.WarnLevel
	case l >= slog.LevelInfo:
		return zapcore.InfoLevel
	}
	return zapcore.DebugLevel
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.core.Enabled(zapLevel(l))
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	ent := zapcore.Entry{Level: zapLevel(r.Level), Time: r.Time, Message: r.Message, LoggerName: "lsp"}
	ce := h.core.Check(ent, nil)
	if ce == nil {
		return nil
	}
	fields := make([]zapcore.Field, 0, len(h.fields)+r.NumAttrs())
	fields = append(fields, h.fields...)
	r.Attrs(func(a slog.Attr) bool {
		fields = append(fields, h.field(a))
		return true
	})
	ce.Write(fields...)
	return nil
}

func (h *slogHandler) field(a slog.Attr) zapcore.Field {
	key := a.Key
	if h.group != "" {
		key = h.group + "." + key
	}
	return zap.Any(key, a.Value.Resolve().Any())
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	n := &slogHandler{core: h.core, group: h.group, fields: append([]zapcore.Field(nil), h.fields...)}
	for _, a := range attrs {
		n.fields = append(n.fields, h.field(a))
	}
	return n
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &slogHandler{core: h.core, fields: h.fields, group: g}
}
