package session

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// decodeBoth decodes a message line the fast way and with encoding/json; fast is false when the
// fast path handed the line over.
func decodeBoth(line []byte) (fastR, stdR record, fast bool, stdErr error) {
	fast = decodeMessageRecord(line, &fastR)
	stdErr = json.Unmarshal(line, &stdR)
	return
}

func randText(r *rand.Rand) string {
	pieces := []string{"a", "line of code", "\n", "\t", `"`, `\`, "é", "日本", "\u2028", "<b>&", "\x01", "😀", " ", "{}", "[]", ":", ","}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

func randMessage(r *rand.Rand) providers.Message {
	m := providers.Message{Role: []providers.Role{providers.RoleUser, providers.RoleAssistant}[r.IntN(2)]}
	for range r.IntN(4) {
		p := providers.Part{Type: []providers.PartType{providers.PartText, providers.PartToolCall, providers.PartToolResult, providers.PartThinking, providers.PartImage}[r.IntN(5)]}
		if r.IntN(2) == 0 {
			p.Text = randText(r)
		}
		if r.IntN(3) == 0 {
			p.Signature, p.Redacted = randText(r), randText(r)
		}
		if r.IntN(3) == 0 {
			p.MimeType, p.Data = "image/png", []byte(randText(r))
		}
		if r.IntN(2) == 0 {
			p.ToolCallID, p.ToolName = randText(r), "read_file"
			args, _ := json.Marshal(map[string]any{"path": randText(r), "n": r.IntN(100), "ok": true, "x": nil})
			p.Args = args
		}
		p.IsError = r.IntN(4) == 0
		m.Parts = append(m.Parts, p)
	}
	return m
}

// The fast decoding of history messages reads every record exactly as encoding/json reads it:
// 3,000 random messages as agentd writes them (escapes, control characters, HTML characters,
// surrogate pairs, images, tool calls, subagents' records), and lines agentd does not write,
// which either decode the same or are handed to encoding/json.
func TestMessageRecordsDecodeAsEncodingJSONDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		m := randMessage(r)
		rec := record{T: recMessage, At: time.Date(2026, 12, 2, 10, 0, 0, r.IntN(1e9), time.UTC), Message: &m}
		if i%5 == 0 {
			rec.Parent = "agent_1"
		}
		line, err := json.Marshal(rec)
		if err != nil {
			t.Fatal(err)
		}
		fastR, stdR, fast, stdErr := decodeBoth(line)
		if !fast || stdErr != nil {
			t.Fatalf("a line agentd writes was handed over (%v) or does not decode (%v):\n%s", fast, stdErr, line)
		}
		if !reflect.DeepEqual(fastR, stdR) {
			t.Fatalf("%s\nfast: %+v\nstd:  %+v", line, fastR.Message, stdR.Message)
		}
	}
	const at = `"at":"2026-12-02T10:00:00Z"`
	for _, line := range []string{
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":null}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":null}]}}`,
		`{"t":"message",` + at + `,"message":{"Role":"user","PARTS":[{"Type":"text","TEXT":"folded"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":"a"},{"type":"text"}],"parts":[{"text":"merged?"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","t\u0065xt":"escaped key"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"image","data":"!!not base64"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","isError":"yes"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"tool_call","args":null}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"tool_call","args":{"a" : [1, 2]}}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":"` + "\xff" + `"}]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":"torn`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":"x"}]}} trailing`,
		`{"t":"message","at":"not a time","message":{"role":"user","parts":[]}}`,
		`{"t":"message","at":null,"message":{"role":"user","parts":[]}}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[]},"extra":1}`,
		`{"t":"message",` + at + `,"message":{"role":"user","parts":[{"type":"text","text":"\ud800 lone"}]}}`,
	} {
		fastR, stdR, fast, stdErr := decodeBoth([]byte(line))
		if fast && (stdErr != nil || !reflect.DeepEqual(fastR, stdR)) {
			t.Errorf("%s\nfast: %+v\nstd (%v): %+v", line, fastR.Message, stdErr, stdR.Message)
		}
		if !fast && !reflect.DeepEqual(fastR, record{}) {
			t.Errorf("%s: handed over but the record was written: %+v", line, fastR)
		}
	}
}

// The same for a streaming reply's checkpoints.
func TestStreamingRecordsDecodeAsEncodingJSONDoes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		sr := streamRecord{MessageID: randText(r), Text: randText(r), Thought: randText(r), Done: r.IntN(3) == 0}
		for range r.IntN(3) {
			sr.Calls = append(sr.Calls, announcedCall{ID: randText(r), Name: "edit_file", Title: randText(r), Kind: "edit"})
		}
		line, err := json.Marshal(record{T: recStreaming, At: time.Date(2026, 12, 2, 10, 0, 0, r.IntN(1e9), time.UTC), Streaming: &sr})
		if err != nil {
			t.Fatal(err)
		}
		var fastR, stdR record
		if !decodeStreamingRecord(line, &fastR) || json.Unmarshal(line, &stdR) != nil || !reflect.DeepEqual(fastR, stdR) {
			t.Fatalf("%s\nfast: %+v\nstd:  %+v", line, fastR.Streaming, stdR.Streaming)
		}
	}
	for _, line := range []string{
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","calls":[]}}`,
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","calls":null}}`,
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","done":1}}`,
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","text":"a","text":"b"}}`,
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"MessageID":"m","Done":true}}`,
		`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","calls":[{"id":"c","extra":1}]}}`,
	} {
		var fastR, stdR record
		fast := decodeStreamingRecord([]byte(line), &fastR)
		stdErr := json.Unmarshal([]byte(line), &stdR)
		if fast && (stdErr != nil || !reflect.DeepEqual(fastR, stdR)) {
			t.Errorf("%s\nfast: %+v\nstd (%v): %+v", line, fastR.Streaming, stdErr, stdR.Streaming)
		}
	}
}

func FuzzMessageRecordDecodesAsEncodingJSONDoes(f *testing.F) {
	f.Add([]byte(`{"t":"message","at":"2026-12-02T10:00:00Z","message":{"role":"user","parts":[{"type":"text","text":"a\nb"}]}}`))
	f.Add([]byte(`{"t":"streaming","at":"2026-12-02T10:00:00Z","streaming":{"messageId":"m","text":"a","calls":[{"id":"c","name":"n"}],"done":true}}`))
	f.Add([]byte(`{"t":"message","at":"2026-12-02T10:00:00Z","message":{"role":"assistant","parts":[{"type":"tool_call","toolCallId":"c","toolName":"t","args":{"a":1}}]},"parentToolCallId":"p"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		fastR, stdR, fast, stdErr := decodeBoth(line)
		if fast && (stdErr != nil || !reflect.DeepEqual(fastR, stdR)) {
			t.Fatalf("%q\nfast: %+v\nstd (%v): %+v", line, fastR, stdErr, stdR)
		}
		var fs record
		if decodeStreamingRecord(line, &fs) && (stdErr != nil || !reflect.DeepEqual(fs, stdR)) {
			t.Fatalf("%q\nfast streaming: %+v\nstd (%v): %+v", line, fs, stdErr, stdR)
		}
	})
}

// Decoding a message only when the history needs it (deferMessage) reads every transcript as
// decoding each one at once does: 300 random transcripts of messages, compactions (keeping 0
// to 6 messages), truncations, amends, interrupted and finished streaming replies, subagents'
// messages, usage, updates and torn lines.
func TestDeferredMessagesReadAsEagerOnes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	dir := t.TempDir()
	at := func(i int) time.Time { return time.Date(2026, 12, 2, 10, 0, 0, i*1000, time.UTC) }
	for n := range 300 {
		var data []byte
		add := func(rec record) {
			b, err := json.Marshal(rec)
			if err != nil {
				t.Fatal(err)
			}
			data = append(append(data, b...), '\n')
		}
		add(record{T: recHeader, At: at(0), Header: &header{ID: "s1", Cwd: "/p"}})
		for i := 1; i < 60; i++ {
			switch k := r.IntN(20); {
			case k < 9:
				m := randMessage(r)
				rec := record{T: recMessage, At: at(i), Message: &m}
				if r.IntN(10) == 0 {
					rec.Parent = "agent_1"
				}
				add(rec)
			case k < 11:
				add(record{T: recCompact, At: at(i), Summary: randText(r), Keep: r.IntN(7)})
			case k < 12:
				add(record{T: recTruncate, At: at(i), Keep: r.IntN(8), MessageID: "u1"})
			case k < 13:
				m := randMessage(r)
				add(record{T: recAmend, At: at(i), Message: &m})
			case k < 16:
				add(record{T: recStreaming, At: at(i), Streaming: &streamRecord{MessageID: []string{"m1", "m2"}[r.IntN(2)], Text: randText(r), Done: r.IntN(3) == 0}})
			case k < 17:
				used := i
				add(record{T: recUsage, At: at(i), Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateUsageUpdate, Used: &used}})
			case k < 19:
				add(record{T: recUpdate, At: at(i), Update: &protocol.SessionUpdate{SessionUpdate: protocol.UpdateUserMessageChunk, MessageID: "u1", Content: &protocol.ContentBlock{Type: "text", Text: "x"}}})
			default:
				data = append(data, `{"t":"message","at":"2026-12-02T10:00:00Z","message":{"role":"user","parts":[{"type":"te`+"\n"...)
			}
		}
		path := filepath.Join(dir, fmt.Sprintf("t%d.jsonl", n))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		read := func(eager bool) *loaded {
			eagerMessages = eager
			defer func() { eagerMessages = false }()
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			l, err := readTranscriptFor(f, true, false, nil)
			if err != nil {
				t.Fatal(err)
			}
			l.arena, l.pending, l.eager = nil, nil, false
			return l
		}
		eager, deferred := read(true), read(false)
		if !reflect.DeepEqual(eager, deferred) {
			for _, c := range []struct {
				what string
				eq   bool
			}{{"history", reflect.DeepEqual(eager.history, deferred.history)}, {"replay", reflect.DeepEqual(eager.replay, deferred.replay)},
				{"updated", eager.updated.Equal(deferred.updated)}, {"rewinds", reflect.DeepEqual(eager.rewinds, deferred.rewinds)}, {"usage", reflect.DeepEqual(eager.usage, deferred.usage)}} {
				if !c.eq {
					t.Errorf("transcript %d: the %s differs", n, c.what)
				}
			}
			t.Fatalf("transcript %d: deferred read %d messages, eager %d\n%+v\n%+v", n, len(deferred.history), len(eager.history), deferred.lastAt, eager.lastAt)
		}
	}
}
