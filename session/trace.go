package session

import (
	"encoding/json"
	"os"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentd-dev/agentd/providers"
)

// tracer writes the agent trace: one JSONL stream with every provider event, tool call and
// permission decision, secrets redacted. It is off until Manager.SetTrace opens a file.
type tracer struct {
	mu sync.Mutex
	f  *os.File
	// enabled mirrors f != nil for on, which every streamed event asks without the lock.
	enabled atomic.Bool
}

// SetTrace starts writing the agent trace to path (appending); "" stops it.
func (m *Manager) SetTrace(path string) error {
	m.trace.mu.Lock()
	defer m.trace.mu.Unlock()
	if m.trace.f != nil {
		m.trace.f.Close()
		m.trace.f = nil
		m.trace.enabled.Store(false)
	}
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	m.trace.f = f
	m.trace.enabled.Store(true)
	return nil
}

func (tr *tracer) on() bool { return tr.enabled.Load() }

// secretRE matches what looks like a key or a token in a trace.
var secretRE = regexp.MustCompile(`(?i)(sk-[a-z0-9_\-]{8,}|sk-ant-[a-z0-9_\-]{8,}|AIza[0-9a-z_\-]{20,}|bearer\s+[a-z0-9._\-]{8,}|(api[_-]?key|token|secret|password)("?\s*[:=]\s*"?)[^\s",}]{4,})`)

// redact hides things that look like keys and tokens.
func redact(b []byte) []byte {
	re := secretRE
	return re.ReplaceAllFunc(b, func(m []byte) []byte {
		sub := re.FindSubmatch(m)
		if len(sub) > 3 && len(sub[2]) > 0 {
			return append(append(append([]byte{}, sub[2]...), sub[3]...), "[REDACTED]"...)
		}
		return []byte("[REDACTED]")
	})
}

func (tr *tracer) event(sessionID, kind string, data any) {
	if !tr.on() {
		return
	}
	b, err := json.Marshal(map[string]any{"at": time.Now().UTC().Format(time.RFC3339Nano), "session": sessionID, "kind": kind, "data": data})
	if err != nil {
		return
	}
	b = append(redact(b), '\n')
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.f != nil {
		_, _ = tr.f.Write(b)
	}
}

func (tr *tracer) providerEvent(sessionID string, ev providers.Event) {
	if !tr.on() {
		return
	}
	d := map[string]any{"type": ev.Type.String()}
	if ev.Text != "" {
		d["text"] = ev.Text
	}
	if ev.ToolCallID != "" {
		d["toolCallId"] = ev.ToolCallID
	}
	if ev.ToolName != "" {
		d["toolName"] = ev.ToolName
	}
	if len(ev.Args) > 0 {
		d["args"] = ev.Args
	}
	if ev.Type == providers.EventUsage {
		d["usage"] = ev.Usage
	}
	if ev.StopReason != "" {
		d["stopReason"] = ev.StopReason
	}
	if ev.Err != nil {
		d["error"] = map[string]any{"kind": ev.Err.Kind, "message": ev.Err.Message, "detail": ev.Err.Detail, "status": ev.Err.Status, "requestId": ev.Err.RequestID}
	}
	tr.event(sessionID, "provider", d)
}

func (tr *tracer) close() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.f != nil {
		tr.f.Close()
		tr.f = nil
		tr.enabled.Store(false)
	}
}
