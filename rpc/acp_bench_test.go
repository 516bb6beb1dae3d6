package rpc

import (
	"strings"
	"testing"
)

// acpTurnFrames are the bodies that cross the ACP door's codec in one warm two-call turn of
// bench/e2e with -editor-fs (session/new, the prompt, the read reverse request and its answer,
// the updates and the answers), as agentd writes and the driver sends them.
func acpTurnFrames() (in, out [][]byte) {
	file := strings.Repeat(`hello, world\n`, 200)
	in = [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":12,"method":"session/new","params":{"cwd":"/tmp/agentd-e2e-root-3753241346","mcpServers":[]}}`),
		[]byte(`{"jsonrpc":"2.0","id":13,"method":"session/prompt","params":{"sessionId":"sess_789b73c3cf1355de","prompt":[{"type":"text","text":"read a.txt"}]}}`),
		[]byte(`{"jsonrpc":"2.0","id":4,"result":{"content":"` + file + `"}}`),
	}
	upd := func(u string) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"agent/session/update","params":{"sessionId":"sess_789b73c3cf1355de","update":` + u + `}}`)
	}
	out = [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":12,"result":{"sessionId":"sess_789b73c3cf1355de","configOptions":[{"id":"mode","name":"Mode","category":"mode","type":"select","currentValue":"ask","options":[{"value":"ask","name":"Ask","description":"Ask before every edit and program run"},{"value":"auto","name":"Auto","description":"Edit and run without asking"},{"value":"plan","name":"Plan","description":"Read and plan only"}]}],"modes":{"currentModeId":"ask","availableModes":[{"id":"ask","name":"Ask"},{"id":"auto","name":"Auto"},{"id":"plan","name":"Plan"}]}}}`),
		upd(`{"sessionUpdate":"available_commands_update","availableCommands":[{"name":"compact","description":"Summarize the conversation so far to free context"},{"name":"init","description":"Survey the project and write an AGENTS.md for it (asks before writing)","input":{"hint":"what to focus on"}}]}`),
		upd(`{"sessionUpdate":"notice","severity":"info","description":"This editor does not share its diagnostics with agentd, so agentd cannot see its language servers' problems.","title":"No diagnostics from the editor"}`),
		upd(`{"sessionUpdate":"tool_call","toolCallId":"call_fake_3_0","kind":"read","status":"pending","title":"Read file"}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"call_fake_3_0","rawInput":{"path":"a.txt"},"title":"Read a.txt"}`),
		upd(`{"sessionUpdate":"usage_update","used":6150,"size":128000}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"call_fake_3_0","status":"in_progress"}`),
		[]byte(`{"jsonrpc":"2.0","id":4,"method":"agent/fs/read_text_file","params":{"sessionId":"sess_789b73c3cf1355de","path":"/tmp/agentd-e2e-root-3753241346/a.txt"}}`),
		upd(`{"sessionUpdate":"tool_call_update","toolCallId":"call_fake_3_0","status":"completed","locations":[{"path":"/tmp/agentd-e2e-root-3753241346/a.txt","line":1}],"rawOutput":{"dirty":false,"lines":200},"content":[{"type":"content","content":{"type":"text","text":"` + file + `"}}]}`),
		upd(`{"sessionUpdate":"agent_message_chunk","messageId":"msg_f3c584_3","content":{"type":"text","text":"The file says hello."}}`),
		upd(`{"sessionUpdate":"usage_update","used":7126,"size":128000}`),
		[]byte(`{"jsonrpc":"2.0","id":13,"result":{"stopReason":"end_turn","usage":{"inputTokens":13264,"outputTokens":12,"totalTokens":13276}}}`),
	}
	return in, out
}

// BenchmarkACPTranslateTurn is the ACP codec's work for one warm two-call turn (see
// acpTurnFrames): what the ACP door adds to the LSP door's path per turn.
func BenchmarkACPTranslateTurn(b *testing.B) {
	in, out := acpTurnFrames()
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range in {
			acpTranslate(true, f)
		}
		for _, f := range out {
			acpTranslate(false, f)
		}
	}
}
