package session

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
)

const (
	// previewEdge is how much of the start and of the end of a streaming call's arguments a
	// preview shows once they outgrow 2×previewEdge; below that the preview is the arguments so
	// far, closed into valid JSON, as rawInput.
	previewEdge = 1 << 10
	// argsThrottle is the least time between a call's announcement and its first preview; the
	// time between previews doubles with each one, up to maxPreviewInterval.
	argsThrottle       = 40 * time.Millisecond
	maxPreviewInterval = time.Second
	// previewEnvelope stands for the notification around a preview (ids, keys, framing) in what
	// a preview costs.
	previewEnvelope = 128
	// metaArgsPreview is the _meta key that marks a tool_call_update as a preview of arguments
	// still streaming (docs/protocol.md).
	metaArgsPreview = "agentd/argsPreview"
)

// argsPreview is the value of _meta["agentd/argsPreview"]: the size of the arguments streamed
// so far, and their first and last previewEdge bytes once they are too big to send whole.
type argsPreview struct {
	Bytes int    `json:"bytes"`
	Head  string `json:"head,omitempty"`
	Tail  string `json:"tail,omitempty"`
}

// argsPacer paces the previews of one streaming call's arguments. A preview is due when the
// interval since the last one has passed, the interval doubling with each preview (a falling
// rate), and the arguments have grown by at least what the last preview cost. The second rule
// bounds the previews of an n-byte argument to about n bytes whatever the stream's speed, so
// with the whole value sent once at the end a streamed argument costs at most about 2n.
type argsPacer struct {
	last     time.Time
	interval time.Duration
	size     int // argument bytes at the last preview
	cost     int // bytes the last preview cost
}

func (p *argsPacer) start(now time.Time) {
	*p = argsPacer{last: now, interval: argsThrottle}
}

func (p *argsPacer) due(size int, now time.Time) bool {
	return now.Sub(p.last) >= p.interval && size-p.size >= p.cost
}

func (p *argsPacer) sent(size, cost int, now time.Time) {
	p.last, p.size, p.cost = now, size, cost
	p.interval = min(2*p.interval, maxPreviewInterval)
}

// previewOf builds the preview update of arguments still streaming: small ones whole as rawInput
// (closed into valid JSON; nil when the prefix cannot be closed), bigger ones as their head and
// tail. It returns the update's rawInput, its _meta and what the preview costs on the wire.
func previewOf(args string) (raw json.RawMessage, meta protocol.Meta, cost int) {
	p := argsPreview{Bytes: len(args)}
	if len(args) <= 2*previewEdge {
		raw = closeJSON([]byte(args))
		if raw == nil {
			return nil, nil, 0
		}
	} else {
		p.Head = clip.String(args, previewEdge, "")
		i := len(args) - previewEdge
		for i < len(args) && !utf8.RuneStart(args[i]) {
			i++
		}
		j := len(args) // a delta may end inside a character: the tail stops before it
		for k := 1; k <= utf8.UTFMax-1 && k <= j-i; k++ {
			if utf8.RuneStart(args[j-k]) {
				if !utf8.FullRuneInString(args[j-k:]) {
					j -= k
				}
				break
			}
		}
		p.Tail = args[i:j]
	}
	b, _ := json.Marshal(p)
	return raw, protocol.Meta{metaArgsPreview: p}, len(raw) + len(b) + previewEnvelope
}
