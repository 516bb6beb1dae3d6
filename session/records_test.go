package session

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

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
