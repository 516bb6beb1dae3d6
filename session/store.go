package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentd-dev/agentd/prompts"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/providers"
)

// Record kinds of a session's transcript file.
const (
	recHeader  = "session"
	recMessage = "message" // a history message, as the model sees it
	recUpdate  = "update"  // a coalesced session update, as load replays it
	recTitle   = "title"
	recConfig  = "config"  // mode or provider changed
	recCompact = "compact" // history before the last Keep messages replaced by Summary
	// recStreaming saves a reply while it streams, so a kill -9 does not lose it (checkpoint.go).
	recStreaming = "streaming"
	// recTruncate drops the history from message Keep on, and the replay from the user message
	// MessageID on (a conversation restore, restore.go).
	recTruncate = "truncate"
	// recRestore records that Checkpoint's files were restored (restore.go).
	recRestore = "restore"
	// recAmend replaces the last history message (an answer review's correction, answer_review.go).
	recAmend = "amend"
	// recUsage is the usage_update after a model call, with the session's cumulative cost: load
	// takes the last one's cost as where the sum goes on, and shows its meter. Unlike the
	// replay it is never cut by a truncation: what was spent stays spent.
	recUsage = "usage"
)

// record is one line of a transcript. Transcripts are append-only JSONL, one file per session;
// each record is written with a single write(2), so a kill mid-write can tear only the last
// line, which load skips.
type record struct {
	T        string                  `json:"t"`
	At       time.Time               `json:"at"`
	Header   *header                 `json:"session,omitempty"`
	Message  *providers.Message      `json:"message,omitempty"`
	Update   *protocol.SessionUpdate `json:"update,omitempty"`
	Title    string                  `json:"title,omitempty"`
	Mode     string                  `json:"mode,omitempty"`
	Provider string                  `json:"provider,omitempty"`
	Thought  string                  `json:"thought,omitempty"`
	// Review is the session's answer_review option, when the user set it.
	Review    *bool         `json:"review,omitempty"`
	Summary   string        `json:"summary,omitempty"`
	Keep      int           `json:"keep,omitempty"`
	Streaming *streamRecord `json:"streaming,omitempty"`
	// Cost is a recUsage's cumulative session cost (nil: no priced call yet).
	Cost *protocol.Cost `json:"cost,omitempty"`
	// MessageID and Checkpoint qualify recTruncate and recRestore.
	MessageID  string `json:"messageId,omitempty"`
	Checkpoint string `json:"checkpointId,omitempty"`
	// Parent is the agent call a subagent's record belongs to: its messages are kept in the
	// file but are not the parent's history; its updates are replayed in place.
	Parent string `json:"parentToolCallId,omitempty"`
}

type header struct {
	ID      string    `json:"id"`
	Cwd     string    `json:"cwd"`
	Dirs    []string  `json:"dirs,omitempty"`
	Created time.Time `json:"created"`
}

type store struct {
	dir string
	log *zap.Logger
	// texts is the prompt config a compacted transcript's summary is shown with.
	texts func() *prompts.Set

	listMu sync.Mutex
	index  *listIndex // the listing index as last read or written; nil before the first list
}

type sessionFile struct {
	mu     sync.Mutex
	f      *os.File
	writes int // write calls made, for the tests that count them
}

func (st *store) path(id string) string { return filepath.Join(st.dir, id+".jsonl") }

func validID(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\.`) && len(id) < 200
}

func (st *store) create(id string, h header) (*sessionFile, error) {
	if st == nil {
		return nil, nil
	}
	if err := os.MkdirAll(st.dir, 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(st.path(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	sf := &sessionFile{f: f}
	line, err := json.Marshal(record{T: recHeader, At: time.Now().UTC(), Header: &h})
	if err == nil {
		_, err = f.Write(append(line, '\n'))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return sf, nil
}

func (st *store) append(id string) (*sessionFile, error) {
	// Read-write, so the last byte is read through the same descriptor.
	f, err := os.OpenFile(st.path(id), os.O_RDWR|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	// A torn last line (a kill mid-write) must not swallow the next record: end it first.
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], fi.Size()-1); err == nil && last[0] != '\n' {
			_, _ = f.Write([]byte("\n"))
		}
	}
	return &sessionFile{f: f}, nil
}

func (st *store) remove(id string) error {
	if !validID(id) {
		return os.ErrNotExist
	}
	return os.Remove(st.path(id))
}

// write appends records, each a line, with one write call: records that go together (a message
// and what the client was shown of it) cost one system call, not one each. A record that cannot
// be encoded is left out, and the others written.
func (sf *sessionFile) write(rs ...record) error {
	if sf == nil || len(rs) == 0 {
		return nil
	}
	// The records and their newlines are encoded into a pooled buffer: json.Marshal's result,
	// then the newline appended to it, were a copy and a reallocation of every record.
	buf := recordBufs.Get().(*bytes.Buffer)
	defer putRecordBuf(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	var encErr error
	for _, r := range rs {
		if r.At.IsZero() {
			r.At = time.Now().UTC()
		}
		n := buf.Len()
		if err := enc.Encode(r); err != nil {
			buf.Truncate(n)
			encErr = errors.Join(encErr, err)
		}
	}
	if buf.Len() == 0 {
		return encErr
	}
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if sf.f == nil {
		return errors.New("session file closed")
	}
	_, err := sf.f.Write(buf.Bytes())
	sf.writes++
	return errors.Join(err, encErr)
}

var recordBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// putRecordBuf keeps buf for the next record unless a large one (a long tool result) grew it.
func putRecordBuf(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 {
		recordBufs.Put(buf)
	}
}

func (sf *sessionFile) close() {
	if sf == nil {
		return
	}
	sf.mu.Lock()
	defer sf.mu.Unlock()
	if sf.f != nil {
		_ = sf.f.Sync()
		_ = sf.f.Close()
		sf.f = nil
	}
}

// loaded is a transcript read back.
type loaded struct {
	header  header
	history []providers.Message
	replay  []replayed
	// arena holds the replay's raw updates (keep); lastAt is the time of the last one, when no
	// decoded record followed it (settleAt).
	arena, lastAt []byte
	// dropped counts the update records not replayed (storedDropped), which the load logs.
	dropped int
	// pending are message lines read but not decoded yet, which follow history
	// (deferMessage); eager decodes every message as it is read (for the tests).
	pending []pendingMessage
	eager   bool
	// usageLine is the last usage record's line, decoded once the whole file is read
	// (lastUsageLine).
	usageLine []byte
	// usage is the last recUsage's update as it was sent (nil: none), cost its sum.
	usage    *protocol.SessionUpdate
	cost     *protocol.Cost
	title    string
	mode     string
	provider string
	thought  string
	review   *bool
	updated  time.Time
	// cut is a streaming reply whose step has not ended (yet) in what was read.
	cut *interrupted
	// rewinds are the compactions, truncations and restores read, in order (restore.go).
	rewinds []rewind
	// texts renders call.interrupted for a call whose result was never written (nil: the
	// built-in set).
	texts *prompts.Set
}

// load reads session id's transcript; without replay it leaves out the updates a load replays
// (a resume does not), which are about half of a transcript's bytes.
func (st *store) load(id string, replay bool) (*loaded, error) {
	if !validID(id) {
		return nil, os.ErrNotExist
	}
	f, err := os.Open(st.path(id))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var texts *prompts.Set
	if st.texts != nil {
		texts = st.texts()
	}
	return readTranscriptFor(f, true, replay, texts)
}

// readTranscript reads a transcript; texts renders a compaction's summary (nil: the built-in set).
func readTranscript(f *os.File, full bool, texts *prompts.Set) (*loaded, error) {
	return readTranscriptFor(f, full, full, texts)
}

// eagerMessages makes the reader decode every message as it is read (deferMessage), for the
// test that holds the two ways equal.
var eagerMessages = false

// updatePrefix starts every recUpdate line ("t" is marshalled first, "at" second).
var updatePrefix = []byte(`{"t":"update","at":"`)

// readTranscriptFor is readTranscript; without replay an update record is not decoded, only
// its time read (it matters to nothing else: the replay is all it feeds).
func readTranscriptFor(f *os.File, full, replay bool, texts *prompts.Set) (*loaded, error) {
	l := &loaded{texts: texts, eager: eagerMessages}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	haveHeader := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		// A listing needs only the header, title and config records ("t" is marshalled first).
		if !full && !bytes.HasPrefix(line, []byte(`{"t":"session"`)) && !bytes.HasPrefix(line, []byte(`{"t":"title"`)) {
			continue
		}
		if !replay && bytes.HasPrefix(line, updatePrefix) {
			at := line[len(updatePrefix):]
			if line[len(line)-1] != '}' {
				continue // torn
			}
			if end := bytes.IndexByte(at, '"'); end > 0 {
				l.lastAt = append(l.lastAt[:0], at[:end]...)
			}
			continue
		}
		if replay && bytes.HasPrefix(line, updatePrefix) && l.storedUpdate(line) != storedDecode {
			continue
		}
		if full && (l.lastUsageLine(line) || l.deferMessage(line)) {
			continue
		}
		var r record
		if !(full && bytes.HasPrefix(line, messagePrefix) && decodeMessageRecord(line, &r)) &&
			!(full && bytes.HasPrefix(line, streamingPrefix) && decodeStreamingRecord(line, &r)) {
			if err := json.Unmarshal(line, &r); err != nil {
				continue // a torn line from a kill mid-write
			}
		}
		if !r.At.IsZero() {
			l.updated, l.lastAt = r.At, l.lastAt[:0]
		}
		if r.Parent != "" {
			// A subagent's: only what the client was shown is replayed.
			if full && r.T == recUpdate && r.Update != nil {
				l.addUpdate(*r.Update)
			}
			continue
		}
		if full {
			l.streamed(&r)
		}
		switch r.T {
		case recHeader:
			if r.Header != nil {
				l.header, haveHeader = *r.Header, true
			}
		case recTitle:
			l.title = r.Title
		case recConfig:
			if r.Mode != "" {
				l.mode = r.Mode
			}
			if r.Provider != "" {
				l.provider = r.Provider
			}
			if r.Thought != "" {
				l.thought = r.Thought
			}
			if r.Review != nil {
				l.review = r.Review
			}
		case recMessage:
			if full && r.Message != nil {
				// Behind the lines not decoded yet (deferMessage), in order.
				l.pending = append(l.pending, pendingMessage{m: r.Message})
			}
		case recAmend:
			if l.flushMessages(); full && r.Message != nil && len(l.history) > 0 {
				l.history[len(l.history)-1] = *r.Message
			}
		case recUpdate:
			if full && r.Update != nil {
				l.addUpdate(*r.Update)
			}
		case recUsage:
			if full && r.Update != nil && r.Update.SessionUpdate == protocol.UpdateUsageUpdate {
				u := *r.Update
				l.usage, l.cost = &u, r.Cost
			}
		case recCompact:
			if full {
				// Only the last Keep messages survive: of the messages not decoded yet, only
				// those are.
				l.flushLast(max(r.Keep, 0))
				keep := min(max(r.Keep, 0), len(l.history))
				rest := l.history[len(l.history)-keep:]
				l.history = append(summaryMessages(texts, r.Summary), rest...)
				l.rewinds = append(l.rewinds, rewind{at: r.At, kind: recCompact})
			}
		case recTruncate:
			if full {
				l.truncate(r.Keep, r.MessageID)
				l.rewinds = append(l.rewinds, rewind{at: r.At, kind: recTruncate, keep: r.Keep})
			}
		case recRestore:
			if full {
				l.rewinds = append(l.rewinds, rewind{at: r.At, kind: recRestore, checkpoint: r.Checkpoint})
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !haveHeader {
		return nil, errors.New("transcript has no header")
	}
	l.streamed(nil)
	l.flushMessages()
	l.pending = nil
	if !replay {
		l.arena = nil // only the replay's raw updates keep it
	}
	l.settleUsage()
	l.settleAt()
	l.history = repairHistory(l.history, l.texts)
	return l, nil
}

// truncate drops the history from message keep on, counted as the live session counted it
// (which had the history repaired when it was loaded), and the replay from the first chunk of
// user message msgID on.
func (l *loaded) truncate(keep int, msgID string) {
	l.flushMessages()
	l.history = repairHistory(l.history, l.texts)
	if keep >= 0 && keep < len(l.history) {
		l.history = l.history[:keep:keep]
	}
	if msgID == "" {
		return
	}
	for i, e := range l.replay {
		if e.kind == protocol.UpdateUserMessageChunk && e.msgID == msgID {
			l.replay = l.replay[:i:i]
			return
		}
	}
}

// interruptedOutput answers tool calls whose results were never written (the daemon died
// mid-step): call.interrupted.
func interruptedOutput(texts *prompts.Set) string {
	if texts == nil {
		texts = prompts.Default()
	}
	return texts.Render("call.interrupted", nil)
}

// repairHistory makes a history read back after a crash valid for every provider: each
// assistant message's tool calls are answered by the next message, in order.
func repairHistory(h []providers.Message, texts *prompts.Set) []providers.Message {
	var out []providers.Message
	for i := 0; i < len(h); i++ {
		m := h[i]
		out = append(out, m)
		var ids []providers.Part
		for _, p := range m.Parts {
			if p.Type == providers.PartToolCall {
				ids = append(ids, p)
			}
		}
		if m.Role != providers.RoleAssistant || len(ids) == 0 {
			continue
		}
		answered := map[string]bool{}
		if i+1 < len(h) && h[i+1].Role == providers.RoleUser {
			for _, p := range h[i+1].Parts {
				if p.Type == providers.PartToolResult {
					answered[p.ToolCallID] = true
				}
			}
		}
		if len(answered) == len(ids) {
			continue
		}
		res := providers.Message{Role: providers.RoleUser}
		for _, c := range ids {
			if answered[c.ToolCallID] {
				for _, p := range h[i+1].Parts {
					if p.Type == providers.PartToolResult && p.ToolCallID == c.ToolCallID {
						res.Parts = append(res.Parts, p)
					}
				}
				continue
			}
			res.Parts = append(res.Parts, providers.Part{Type: providers.PartToolResult, ToolCallID: c.ToolCallID, ToolName: c.ToolName, Text: interruptedOutput(texts), IsError: true})
		}
		out = append(out, res)
		if len(answered) > 0 {
			i++ // the partial results message is replaced by the repaired one
		}
	}
	return out
}

// indexFile caches each transcript's listing (id, cwd, title, updatedAt) beside the
// transcripts, keyed by file name and checked against the file's size and modification time.
// Listing 1,000 sessions read every transcript whole (160 MB: 31 ms warm, 95 ms cold, issue 18);
// with the index it reads one directory, stats each file and reads the transcripts that changed.
// Entries are refreshed when stale rather than on each write, so a turn's appends cost nothing
// more and a transcript written by another process (or an older agentd) is still listed right.
const indexFile = "index"

type indexEntry struct {
	Size  int64
	Mtime int64 // UnixNano
	Info  protocol.SessionInfo
}

type listIndex struct {
	Version  int
	Sessions map[string]indexEntry // by file name
}

const listIndexVersion = 1

// transcriptStat is one transcript's file name, size and mtime (UnixNano), as the index keys it.
type transcriptStat struct {
	name  string
	size  int64
	mtime int64
}

func (st *store) list() ([]protocol.SessionInfo, error) {
	files, err := transcriptStats(st.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	st.listMu.Lock()
	defer st.listMu.Unlock()
	old := st.readIndex()
	next := listIndex{Version: listIndexVersion, Sessions: make(map[string]indexEntry, len(files))}
	changed := false
	var out []protocol.SessionInfo
	for _, f := range files {
		if ie, ok := old.Sessions[f.name]; ok && ie.Size == f.size && ie.Mtime == f.mtime {
			next.Sessions[f.name] = ie
			out = append(out, ie.Info)
			continue
		}
		changed = true
		info, ok := listOne(filepath.Join(st.dir, f.name))
		if !ok {
			continue
		}
		next.Sessions[f.name] = indexEntry{Size: f.size, Mtime: f.mtime, Info: info}
		out = append(out, info)
	}
	if changed || len(next.Sessions) != len(old.Sessions) {
		st.writeIndex(next)
	}
	return out, nil
}

// listOne reads a transcript's listing from the file itself.
func listOne(path string) (protocol.SessionInfo, bool) {
	f, err := os.Open(path)
	if err != nil {
		return protocol.SessionInfo{}, false
	}
	defer f.Close()
	l, err := readTranscript(f, false, nil)
	if err != nil {
		return protocol.SessionInfo{}, false
	}
	if fi, err := f.Stat(); err == nil && fi.ModTime().After(l.updated) {
		l.updated = fi.ModTime().UTC()
	}
	return protocol.SessionInfo{SessionID: l.header.ID, Cwd: l.header.Cwd, Title: l.title, UpdatedAt: l.updated.Format(time.RFC3339Nano)}, true
}

// The index file is a header line, then one line per transcript of space-separated fields:
// the quoted file name, size, mtime, then the quoted id, cwd, title and updatedAt. Decoding
// 1,000 entries as JSON took half of a listing's budget; this takes a tenth of it.
const indexHeader = "agentd-session-index"

func encodeIndex(ix listIndex) []byte {
	b := fmt.Appendf(nil, "%s %d\n", indexHeader, ix.Version)
	for name, e := range ix.Sessions {
		b = strconv.AppendQuote(b, name)
		b = fmt.Appendf(b, " %d %d ", e.Size, e.Mtime)
		for i, f := range []string{e.Info.SessionID, e.Info.Cwd, e.Info.Title, e.Info.UpdatedAt} {
			if i > 0 {
				b = append(b, ' ')
			}
			b = strconv.AppendQuote(b, f)
		}
		b = append(b, '\n')
	}
	return b
}

// decodeIndex parses an index file; any malformed line makes the whole index invalid.
func decodeIndex(b []byte) (listIndex, bool) {
	head, rest, _ := bytes.Cut(b, []byte("\n"))
	if string(head) != fmt.Sprintf("%s %d", indexHeader, listIndexVersion) {
		return listIndex{}, false
	}
	ix := listIndex{Version: listIndexVersion, Sessions: map[string]indexEntry{}}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		s := string(line)
		var strs [5]string
		var nums [2]int64
		for i := range 7 {
			if i == 1 || i == 2 {
				num, after, ok := strings.Cut(s, " ")
				n, err := strconv.ParseInt(num, 10, 64)
				if !ok || err != nil {
					return listIndex{}, false
				}
				nums[i-1], s = n, after
				continue
			}
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return listIndex{}, false
			}
			v, err := strconv.Unquote(q)
			if err != nil {
				return listIndex{}, false
			}
			s = s[len(q):]
			if i < 6 {
				var ok bool
				if s, ok = strings.CutPrefix(s, " "); !ok {
					return listIndex{}, false
				}
			}
			strs[max(i-2, 0)] = v
		}
		if s != "" {
			return listIndex{}, false
		}
		ix.Sessions[strs[0]] = indexEntry{Size: nums[0], Mtime: nums[1],
			Info: protocol.SessionInfo{SessionID: strs[1], Cwd: strs[2], Title: strs[3], UpdatedAt: strs[4]}}
	}
	return ix, true
}

// readIndex returns the cached index, read from disk the first time; a missing, unreadable
// or foreign index is an empty one, rebuilt by the next list.
func (st *store) readIndex() listIndex {
	if st.index != nil {
		return *st.index
	}
	if b, err := os.ReadFile(filepath.Join(st.dir, indexFile)); err == nil {
		if ix, ok := decodeIndex(b); ok {
			return ix
		}
	}
	return listIndex{}
}

// writeIndex keeps ix in memory and replaces the file atomically; failing to write it only
// makes the next process's first listing slower.
func (st *store) writeIndex(ix listIndex) {
	st.index = &ix
	b := encodeIndex(ix)
	tmp, err := os.CreateTemp(st.dir, indexFile+".*")
	if err != nil {
		st.debug("session index not written", err)
		return
	}
	_, werr := tmp.Write(b)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(st.dir, indexFile))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		st.debug("session index not written", werr)
	}
}

func (st *store) debug(msg string, err error) {
	if st.log != nil {
		st.log.Debug(msg, zap.Error(err))
	}
}
