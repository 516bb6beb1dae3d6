package session

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agentd-dev/agentd/internal/clip"
	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
	"go.uber.org/zap"
)

// A checkpoint is what a turn's file changes replaced: the pre-image of every file it created,
// edited, renamed or deleted (turnChanges), with the prompt that started the turn and where the
// turn began in the history. It is saved before the edit that first touches each file is
// applied, as one JSON file per turn beside the session's transcript
// (sessions/ID.checkpoints/), written aside and renamed into place, so a kill leaves the last
// whole version; and saved again whole when the turn ends. A session keeps the newest
// maxCheckpoints turns' checkpoints and at most maxCheckpointBytes of them; older ones are
// deleted as new ones are saved.
const (
	maxCheckpoints     = 20
	maxCheckpointTitle = 200
)

// maxCheckpointBytes is a variable so a test can bound it small.
var maxCheckpointBytes = 64 << 20

type checkpoint struct {
	ID        string    `json:"checkpointId"`
	CreatedAt time.Time `json:"createdAt"`
	Prompt    string    `json:"prompt"`
	// History is how many history messages came before the turn's prompt; MessageID is the
	// prompt's user message (a conversation restore cuts the replay there).
	History   int           `json:"history"`
	MessageID string        `json:"messageId,omitempty"`
	Files     []*fileChange `json:"files"`
}

// checkpointDir is where the session's checkpoints are saved; "" when nothing is persisted.
func (s *Session) checkpointDir() string {
	if s.m.store == nil {
		return ""
	}
	return filepath.Join(s.m.store.dir, s.id+".checkpoints")
}

// startCheckpoint begins the turn's checkpoint; its files are filled in as the turn changes them.
func (t *turn) startCheckpoint(blocks []protocol.ContentBlock, history int) {
	var prompt []string
	for _, b := range blocks {
		if b.Type == "text" {
			prompt = append(prompt, b.Text)
		}
	}
	t.cp = &checkpoint{ID: newID("cp_"), CreatedAt: time.Now().UTC(), Prompt: clip.String(strings.Join(prompt, " "), maxCheckpointTitle, "…"), History: history}
	t.changes.before = t.saveBefore
}

// cpIndex is a checkpoint as saved: its files' pre-images are kept beside it, one raw file each
// (blob N), so saving costs a write per file and no encoding.
type cpIndex struct {
	ID        string    `json:"checkpointId"`
	CreatedAt time.Time `json:"createdAt"`
	Prompt    string    `json:"prompt"`
	History   int       `json:"history"`
	MessageID string    `json:"messageId,omitempty"`
	Files     []cpFile  `json:"files"`
}

type cpFile struct {
	Path        string `json:"path"`
	Change      string `json:"change"`
	From        string `json:"from,omitempty"`
	Blob        int    `json:"blob,omitempty"`
	BeforeKnown bool   `json:"beforeKnown,omitempty"`
	Dir         bool   `json:"dir,omitempty"`
	// After is the blob of the file's text when the turn ended (its post-image), which a
	// restore reverses the turn's hunks from; written once, by the turn's last save. With a
	// pre-image (Blob) it holds only the bytes between the AfterPrefix bytes the post-image
	// shares with the start of the pre-image and the AfterSuffix bytes it shares with its end.
	After       int `json:"after,omitempty"`
	AfterPrefix int `json:"afterPrefix,omitempty"`
	AfterSuffix int `json:"afterSuffix,omitempty"`
}

// commonEnds returns how many bytes a and b share at their start, and then at their end (not
// counting the shared start). Whole chunks are compared with string equality, which is memcmp.
func commonEnds(a, b string) (prefix, suffix int) {
	const chunk = 256
	n := min(len(a), len(b))
	for prefix+chunk <= n && a[prefix:prefix+chunk] == b[prefix:prefix+chunk] {
		prefix += chunk
	}
	for prefix < n && a[prefix] == b[prefix] {
		prefix++
	}
	n -= prefix
	for suffix+chunk <= n && a[len(a)-suffix-chunk:len(a)-suffix] == b[len(b)-suffix-chunk:len(b)-suffix] {
		suffix += chunk
	}
	for suffix < n && a[len(a)-1-suffix] == b[len(b)-1-suffix] {
		suffix++
	}
	return prefix, suffix
}

// saveBefore saves the pre-images an edit about to be applied replaces, and the checkpoint's
// index naming them, before the editor applies it: a crash between the two leaves a pre-image
// equal to the file, which a restore leaves as it is.
func (t *turn) saveBefore(changes []workspace.Change, pre map[string]preImage) {
	files := t.changes.list()
	known := map[string]bool{}
	for _, f := range files {
		known[f.Path] = true
	}
	fresh := false
	add := func(f *fileChange) {
		if !known[f.Path] {
			known[f.Path] = true
			files = append(files, f)
			fresh = true
		}
	}
	for _, c := range changes {
		switch c.Kind {
		case workspace.ChangeEdit:
			add(&fileChange{Path: c.Path, Change: changeModified, Before: c.OldText, BeforeKnown: true, origin: c.Path})
		case workspace.ChangeCreate:
			if c.Dir {
				continue
			}
			if p, ok := pre[c.Path]; ok {
				add(&fileChange{Path: c.Path, Change: changeModified, Before: p.text, BeforeKnown: p.ok, origin: c.Path})
			} else {
				add(&fileChange{Path: c.Path, Change: changeCreated})
			}
		}
	}
	for p, img := range pre {
		add(&fileChange{Path: p, Change: changeDeleted, Before: img.text, BeforeKnown: img.ok, origin: p})
	}
	if fresh {
		t.saveCheckpoint(files)
	}
}

// endCheckpoint saves the turn's checkpoint whole once the turn ended, or removes it when the
// turn left no file changed.
func (t *turn) endCheckpoint() {
	if t.cp == nil {
		return
	}
	defer t.closeCheckpoint()
	files := t.changes.list()
	if len(files) == 0 {
		t.cpMu.Lock()
		written := t.cpWritten
		t.cpMu.Unlock()
		// Most turns change nothing and never wrote their log: no file to remove.
		if dir := t.s.checkpointDir(); dir != "" && written {
			_ = os.Remove(filepath.Join(dir, t.cp.dirName()))
		}
		t.s.mu.Lock()
		if n := len(t.s.checkpoints); n > 0 && t.s.checkpoints[n-1].ID == t.cp.ID {
			t.s.checkpoints = t.s.checkpoints[:n-1]
		}
		t.s.mu.Unlock()
		return
	}
	t.cpMu.Lock()
	t.cpFinal = true
	t.cpMu.Unlock()
	t.saveCheckpoint(files)
	t.s.trackEdits(files)
}

func (cp *checkpoint) dirName() string {
	return fmt.Sprintf("%020d-%s.log", cp.CreatedAt.UnixNano(), cp.ID)
}

func (t *turn) saveCheckpoint(files []*fileChange) {
	// A write call the turn stopped waiting for (a cancel) may still save while the turn ends.
	t.cpMu.Lock()
	defer t.cpMu.Unlock()
	cp := *t.cp
	cp.Files = files
	s := t.s
	s.mu.Lock()
	if n := len(s.checkpoints); n > 0 && s.checkpoints[n-1].ID == cp.ID {
		s.checkpoints[n-1] = &cp
	} else {
		s.checkpoints = append(s.checkpoints, &cp)
	}
	s.mu.Unlock()
	dir := s.checkpointDir()
	if dir != "" {
		if err := t.writeCheckpoint(dir, &cp); err != nil {
			s.m.log.Warn("checkpoint save failed: " + err.Error())
		}
		if t.cpEnded && t.log != nil {
			_ = t.log.Close()
			t.log = nil
		}
	}
	s.trimCheckpoints(dir)
}

// A checkpoint is saved as an append-only log, one per turn: each pre-image is a header line
// {"blob":N,"len":BYTES} and its raw bytes, written when the turn first replaces that file;
// each version of the index is a line {"index":…} naming the blobs. A kill mid-write tears only
// the last record, which a read skips; the last whole index wins.
type cpRecord struct {
	Blob  int      `json:"blob,omitempty"`
	Len   int      `json:"len,omitempty"`
	Index *cpIndex `json:"index,omitempty"`
}

// writeCheckpoint appends the pre-images not written yet, then the index.
func (t *turn) writeCheckpoint(dir string, cp *checkpoint) error {
	if t.log == nil {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		f, err := os.OpenFile(filepath.Join(dir, cp.dirName()), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return err
		}
		t.log = f
		t.cpWritten = true
		if t.blobs == nil {
			t.blobs = map[string]int{}
		}
	}
	ix := cpIndex{ID: cp.ID, CreatedAt: cp.CreatedAt, Prompt: cp.Prompt, History: cp.History, MessageID: cp.MessageID, Files: make([]cpFile, 0, len(cp.Files))}
	for _, f := range cp.Files {
		cf := cpFile{Path: f.Path, Change: f.Change, From: f.From, BeforeKnown: f.BeforeKnown, Dir: f.Dir}
		if f.BeforeKnown && f.Change != changeCreated && f.origin != "" {
			n, ok := t.blobs[f.origin]
			if !ok {
				n = len(t.blobs) + 1
				head, _ := json.Marshal(cpRecord{Blob: n, Len: len(f.Before)})
				if _, err := t.log.Write(append(head, '\n')); err != nil {
					return err
				}
				if _, err := t.log.WriteString(f.Before); err != nil {
					return err
				}
				t.blobs[f.origin] = n
			}
			cf.Blob = n
		}
		if t.cpFinal && f.AfterKnown && f.Change != changeDeleted && !f.Dir {
			// The post-image is saved as what it changed in the pre-image when there is one:
			// the bytes between the common prefix and suffix (a turn's edits are mostly small).
			mid := f.After
			if cf.Blob > 0 {
				cf.AfterPrefix, cf.AfterSuffix = commonEnds(f.Before, f.After)
				mid = f.After[cf.AfterPrefix : len(f.After)-cf.AfterSuffix]
			}
			key := "\x00after:" + f.Path
			n, ok := t.blobs[key]
			if !ok {
				n = len(t.blobs) + 1
				head, _ := json.Marshal(cpRecord{Blob: n, Len: len(mid)})
				if _, err := t.log.Write(append(head, '\n')); err != nil {
					return err
				}
				if _, err := t.log.WriteString(mid); err != nil {
					return err
				}
				t.blobs[key] = n
			}
			cf.After = n
		}
		ix.Files = append(ix.Files, cf)
	}
	b, err := json.Marshal(cpRecord{Index: &ix})
	if err != nil {
		return err
	}
	_, err = t.log.Write(append(b, '\n'))
	return err
}

// closeCheckpoint closes the turn's checkpoint log.
func (t *turn) closeCheckpoint() {
	t.cpMu.Lock()
	defer t.cpMu.Unlock()
	t.cpEnded = true
	if t.log != nil {
		_ = t.log.Close()
		t.log = nil
	}
}

// trimCheckpoints drops the oldest checkpoints beyond maxCheckpoints and maxCheckpointBytes.
func (s *Session) trimCheckpoints(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	total := 0
	keep := len(s.checkpoints)
	for i := len(s.checkpoints) - 1; i >= 0; i-- {
		total += s.checkpoints[i].size()
		if len(s.checkpoints)-i > maxCheckpoints || (total > maxCheckpointBytes && i < len(s.checkpoints)-1) {
			keep = len(s.checkpoints) - 1 - i
			break
		}
	}
	drop := s.checkpoints[:len(s.checkpoints)-keep]
	for _, cp := range drop {
		if dir != "" {
			_ = os.Remove(filepath.Join(dir, cp.dirName()))
		}
	}
	s.checkpoints = append([]*checkpoint(nil), s.checkpoints[len(s.checkpoints)-keep:]...)
}

func (cp *checkpoint) size() int {
	n := len(cp.Prompt)
	for _, f := range cp.Files {
		n += len(f.Path) + len(f.Before) + len(f.After)
	}
	return n
}

// loadCheckpoints reads the session's saved checkpoints, oldest first (a log without a whole
// index is skipped), with the transcript's rewinds that tell which are restored already.
func (s *Session) loadCheckpoints(rewinds []rewind) {
	s.restore.mu.Lock()
	s.restore.events = rewinds
	s.restore.mu.Unlock()
	dir := s.checkpointDir()
	if dir == "" {
		return
	}
	names, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	sort.Strings(names)
	var cps []*checkpoint
	var bad []string
	for _, n := range names {
		cp, err := readCheckpointLog(dir, filepath.Base(n))
		if err != nil {
			s.m.log.Warn("checkpoint log refused", zap.String("file", n), zap.Error(err))
			bad = append(bad, err.Error())
		}
		if cp != nil {
			cps = append(cps, cp)
		}
	}
	if len(bad) > 0 {
		s.notice(protocol.SeverityWarning, "Checkpoints not loaded", strings.Join(bad, "\n")+"\nThe other checkpoints were loaded.")
	}
	s.mu.Lock()
	s.checkpoints = cps
	s.mu.Unlock()
	for _, cp := range cps {
		if !s.undone(cp) {
			s.trackEdits(cp.Files)
		}
	}
}

// readCheckpoint reads the checkpoint log at path; false when it holds no usable checkpoint.
func readCheckpoint(path string) (*checkpoint, bool) {
	cp, _ := readCheckpointLog(filepath.Dir(path), filepath.Base(path))
	return cp, cp != nil
}

// readCheckpointLog reads the checkpoint log name in dir. The log is opened through an os.Root
// of dir and must be a regular file: agentd never writes a link there, and one a program
// planted (to a file outside) would have /undo write its target into the project. A record
// claiming more bytes than the file holds, or fewer than none, ends the read with an error
// naming it, before anything is allocated for it (a corrupt length crashed the daemon out of
// memory); the last whole index before it is still returned when its blobs were read.
func readCheckpointLog(dir, name string) (*checkpoint, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	if st, err := root.Lstat(name); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("checkpoint log %s is not a regular file (a link or other); it was not read", filepath.Join(dir, name))
	}
	f, err := root.Open(name)
	if err != nil {
		return nil, fmt.Errorf("checkpoint log %s: %w", filepath.Join(dir, name), err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := st.Size()
	r := bufio.NewReader(f)
	blobs := map[int]string{}
	var ix *cpIndex
	var bad error
	var offset int64
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		offset += int64(len(line))
		var rec cpRecord
		if json.Unmarshal(line, &rec) != nil {
			break
		}
		if rec.Index != nil {
			ix = rec.Index
			continue
		}
		if rec.Len < 0 || int64(rec.Len) > size-offset {
			bad = fmt.Errorf("checkpoint log %s: record %d claims %d bytes, but %d are left in the file; it and what follows were not read", filepath.Join(dir, name), n, rec.Len, size-offset)
			break
		}
		buf := make([]byte, rec.Len)
		if _, err := io.ReadFull(r, buf); err != nil {
			break
		}
		offset += int64(rec.Len)
		blobs[rec.Blob] = string(buf)
	}
	cp, ok := checkpointFromIndex(ix, blobs)
	if !ok {
		return nil, bad
	}
	return cp, bad
}

// checkpointFromIndex builds the checkpoint an index names from the blobs read; false when the
// index is missing or names a blob that is not there.
func checkpointFromIndex(ix *cpIndex, blobs map[int]string) (*checkpoint, bool) {
	if ix == nil || ix.ID == "" {
		return nil, false
	}
	cp := &checkpoint{ID: ix.ID, CreatedAt: ix.CreatedAt, Prompt: ix.Prompt, History: ix.History, MessageID: ix.MessageID}
	for _, cf := range ix.Files {
		f := &fileChange{Path: cf.Path, Change: cf.Change, From: cf.From, BeforeKnown: cf.BeforeKnown, Dir: cf.Dir}
		if cf.Blob > 0 {
			text, ok := blobs[cf.Blob]
			if !ok {
				return nil, false
			}
			f.Before = text
		}
		if cf.After > 0 {
			text, ok := blobs[cf.After]
			if !ok {
				return nil, false
			}
			if cf.Blob > 0 {
				b := f.Before
				if cf.AfterPrefix < 0 || cf.AfterSuffix < 0 || cf.AfterPrefix+cf.AfterSuffix > len(b) {
					return nil, false
				}
				text = b[:cf.AfterPrefix] + text + b[len(b)-cf.AfterSuffix:]
			}
			f.After, f.AfterKnown = text, true
		}
		cp.Files = append(cp.Files, f)
	}
	return cp, true
}

// Checkpoints lists the session's checkpoints, newest first (agent/x/checkpoints/list).
func (m *Manager) Checkpoints(ctx context.Context, p protocol.SessionIDParams) (protocol.CheckpointListResult, error) {
	if err := checkRequired("sessionId", p.SessionID); err != nil {
		return protocol.CheckpointListResult{}, err
	}
	s, err := m.get(p.SessionID)
	if err != nil {
		return protocol.CheckpointListResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res := protocol.CheckpointListResult{Checkpoints: []protocol.Checkpoint{}}
	for i := len(s.checkpoints) - 1; i >= 0; i-- {
		cp := s.checkpoints[i]
		out := protocol.Checkpoint{CheckpointID: cp.ID, CreatedAt: cp.CreatedAt.Format(time.RFC3339Nano), Prompt: cp.Prompt, Files: []protocol.CheckpointFile{}}
		for _, f := range cp.Files {
			if f.Dir || strings.ContainsRune(f.Path, 0) {
				continue
			}
			out.Files = append(out.Files, protocol.CheckpointFile{Path: f.Path, Change: f.Change, From: f.From})
		}
		res.Checkpoints = append(res.Checkpoints, out)
	}
	return res, nil
}
