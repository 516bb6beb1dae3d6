package session

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/internal/jscan"
	"github.com/agentd-dev/agentd/protocol"
)

// A load replays every update record of the transcript (docs/protocol.md: session/load "replays
// the whole history"). Decoding each into a protocol.SessionUpdate only to encode it again for
// the wire was almost all of a load's CPU (5.5 s of 100 MB, docs/benchmarks.md), so an update
// record is kept as the JSON it was stored as, walked but not decoded, and handed to a client
// that takes it so (storedUpdater: the editor bridge, whose connection checks it strictly before
// writing it into the frame as it is).
//
// A transcript is a file on disk that an attacker may have planted or a crash torn. What is kept
// raw is only what agentd's own encoder writes: a record of the keys t, at, update and
// parentToolCallId; an update object whose first key is sessionUpdate, whose keys are
// SessionUpdate's own (updateKeys), none twice, none escaped. A record or update that names a
// key of the JSON-RPC envelope (a method, an id, params, another sessionId) is dropped; one that
// is otherwise unlike what agentd writes (an unknown key, an older format, a line too long) goes
// the decoding path, which keeps only SessionUpdate's fields; one that is not JSON is skipped,
// as a torn line always was.

// maxStoredUpdate bounds an update record a load replays: the connection's queue (16 MiB) holds
// one whole, and no update agentd sends comes near it (tool output is clipped long before).
const maxStoredUpdate = 16 << 20

// replayed is one update a load replays: raw, as the transcript stored it (checked by
// storedUpdate), or u, decoded (an older record, or one the reader made: an interrupted reply).
type replayed struct {
	raw  []byte
	u    *protocol.SessionUpdate
	kind string
	// msgID is a user_message_chunk's message id: a conversation restore cuts the replay there.
	msgID string
}

// storedUpdater is a Client that takes an update as the JSON a transcript stored it as (the
// editor bridge): the replay of a load then costs neither a decode nor an encode per update.
type storedUpdater interface {
	UpdateStored(sessionID, kind string, update []byte)
}

// envelopeKeys are the JSON-RPC envelope's members and the notification's own: a record or an
// update that names one was not written by agentd, and is dropped rather than forwarded.
var envelopeKeys = map[string]bool{"jsonrpc": true, "method": true, "id": true, "params": true,
	"result": true, "error": true, "sessionId": true}

// updateKeys are the keys SessionUpdate's encoding writes: its fields' JSON names, and the two
// kind-dependent ones MarshalJSON adds (content, title). Derived from the type, so a field added
// there is replayed raw without a second list to keep.
var updateKeys = func() map[string]bool {
	keys := map[string]bool{"content": true, "title": true}
	t := reflect.TypeFor[protocol.SessionUpdate]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys[name] = true
		}
	}
	return keys
}()

// arenaBlock is the size of the blocks the kept updates are copied into: one allocation per
// megabyte of replay instead of one per update.
const arenaBlock = 1 << 20

// keep copies b into the replay's arena; the copy is never moved.
func (l *loaded) keep(b []byte) []byte {
	if len(b) > arenaBlock/4 {
		return bytes.Clone(b)
	}
	if cap(l.arena)-len(l.arena) < len(b) {
		l.arena = make([]byte, 0, arenaBlock)
	}
	n := len(l.arena)
	l.arena = append(l.arena, b...)
	return l.arena[n:len(l.arena):len(l.arena)]
}

// addUpdate appends a decoded update to the replay.
func (l *loaded) addUpdate(u protocol.SessionUpdate) {
	e := replayed{u: &u, kind: u.SessionUpdate}
	if u.SessionUpdate == protocol.UpdateUserMessageChunk {
		e.msgID = u.MessageID
	}
	l.replay = append(l.replay, e)
}

// Outcomes of storedUpdate.
const (
	storedKept    = iota // replayed raw
	storedDropped        // names an envelope key, or too long: not replayed
	storedDecode         // not what agentd writes: for the decoding path
)

// storedUpdate reads an update record (a line that starts with updatePrefix) for the replay
// without decoding its update; see the comment at the top of this file for what it keeps.
func (l *loaded) storedUpdate(line []byte) int {
	if len(line) > maxStoredUpdate {
		l.dropped++
		return storedDropped
	}
	var at, upd []byte
	dropped, odd := false, false
	err := jscan.ParseObject(line, func(key, val []byte, kind byte) bool {
		switch k := string(key); {
		case k == "t" || k == "parentToolCallId":
		case k == "at" && kind == jscan.KindString && at == nil:
			at = val
		case k == "update" && kind == jscan.KindObject && upd == nil:
			upd = val
		case envelopeKeys[k]:
			dropped = true
			return false
		default:
			odd = true // an unknown key, a duplicate, a key of the wrong type
		}
		return true
	})
	switch {
	case err != nil:
		return storedDecode // not JSON: the decoding path skips it as a torn line
	case dropped:
		l.dropped++
		return storedDropped
	case odd || upd == nil:
		return storedDecode
	}
	e := replayed{}
	var seen [32]string
	n := 0
	hasID, hasContent := false, false
	first := true
	end := jscan.Members(upd, 0, func(key []byte, vi int) int {
		ve, kind := jscan.ValueEnd(upd, vi)
		if ve < 0 {
			return -1
		}
		k := string(key)
		if envelopeKeys[k] {
			dropped = true
			return jscan.StopWalk
		}
		if !updateKeys[k] || n == len(seen) || (first && k != "sessionUpdate") {
			odd = true
			return jscan.StopWalk
		}
		for _, s := range seen[:n] {
			if s == k {
				odd = true
				return jscan.StopWalk
			}
		}
		seen[n], first = k, false
		n++
		val := upd[vi:ve]
		switch k {
		case "sessionUpdate":
			if kind != jscan.KindString || bytes.IndexByte(val, '\\') >= 0 {
				odd = true
				return jscan.StopWalk
			}
			e.kind = internKind(val[1 : len(val)-1])
		case "messageId":
			if kind != jscan.KindString {
				odd = true
				return jscan.StopWalk
			}
			hasID = true
			if e.kind == protocol.UpdateUserMessageChunk {
				var buf []byte
				e.msgID, _ = jscan.Unquote(val, &buf)
			}
		case "content":
			hasContent = true
		}
		return ve
	})
	switch {
	case dropped:
		l.dropped++
		return storedDropped
	case odd || end != len(upd) || e.kind == "":
		return storedDecode
	case hasContent && !hasID && contentKind(e.kind):
		return storedDecode // written before chunks carried a message id: the load gives it one
	}
	e.raw = l.keep(upd)
	l.replay = append(l.replay, e)
	if len(at) > 2 {
		l.lastAt = append(l.lastAt[:0], at[1:len(at)-1]...)
	}
	return storedKept
}

// contentKind reports whether an update of kind carries its content as a protocol.ContentBlock
// (SessionUpdate.Content), the content a load gives a message id when it has none.
func contentKind(kind string) bool {
	switch kind {
	case protocol.UpdateToolCall, protocol.UpdateToolCallUpdate, protocol.UpdateSessionInfoUpdate, protocol.UpdateNotice:
		return false
	}
	return true
}

// commonKinds are the update kinds a replay names most, so that each stored update does not allocate
// its kind's string.
var commonKinds = []string{protocol.UpdateUserMessageChunk, protocol.UpdateAgentMessageChunk, protocol.UpdateAgentThoughtChunk,
	protocol.UpdateToolCall, protocol.UpdateToolCallUpdate, protocol.UpdatePlan, protocol.UpdateNotice,
	protocol.UpdateUsageUpdate, protocol.UpdateCompactionUpdate, protocol.UpdateSessionInfoUpdate}

func internKind(b []byte) string {
	for _, k := range commonKinds {
		if string(b) == k {
			return k
		}
	}
	return string(b)
}

// settleAt turns the time of the last update record kept raw, when no decoded record came
// after it, into the session's updated time: one time.Parse per load instead of one per update.
func (l *loaded) settleAt() {
	if len(l.lastAt) == 0 {
		l.lastAt = nil
		return
	}
	if t, err := time.Parse(time.RFC3339Nano, string(l.lastAt)); err == nil && !t.IsZero() {
		l.updated = t
	}
	l.lastAt = nil
}

// decodeStored decodes a replayed update for a client that takes only decoded ones.
func decodeStored(e replayed) (protocol.SessionUpdate, bool) {
	if e.u != nil {
		return *e.u, true
	}
	var u protocol.SessionUpdate
	if json.Unmarshal(e.raw, &u) != nil {
		return u, false
	}
	return u, true
}

// usagePrefix starts every recUsage line ("t" is marshalled first, "at" second).
var usagePrefix = []byte(`{"t":"usage","at":"`)

// lastUsageLine keeps a usage record's line instead of decoding it: a load takes only the last
// one (usage is never cut by a truncation), and a transcript has one per model call. Only a
// line that is valid JSON and no subagent's is kept; any other goes the decoding path.
func (l *loaded) lastUsageLine(line []byte) bool {
	if !bytes.HasPrefix(line, usagePrefix) || bytes.Contains(line, []byte(`"parentToolCallId"`)) ||
		jscan.ValidValueEnd(line, 0) != len(line) {
		return false
	}
	at := line[len(usagePrefix):]
	end := bytes.IndexByte(at, '"')
	if end <= 0 {
		return false
	}
	l.usageLine = append(l.usageLine[:0], line...)
	l.lastAt = append(l.lastAt[:0], at[:end]...)
	return true
}

// settleUsage decodes the last usage record kept by lastUsageLine.
func (l *loaded) settleUsage() {
	if len(l.usageLine) == 0 {
		return
	}
	var r record
	if json.Unmarshal(l.usageLine, &r) == nil && r.Update != nil && r.Update.SessionUpdate == protocol.UpdateUsageUpdate {
		u := *r.Update
		l.usage, l.cost = &u, r.Cost
	}
	l.usageLine = nil
}
