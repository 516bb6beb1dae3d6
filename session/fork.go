package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentd-dev/agentd/protocol"
	"github.com/agentd-dev/agentd/workspace"
)

// Fork starts a new session holding a copy of another's history (ACP's unstable session/fork),
// for a side question that should not pollute the main thread. The copy is the source's
// transcript as stored now: a turn running in the source is copied as far as it has been saved.
// The fork is persisted before it answers; the source is not touched.
func (m *Manager) Fork(ctx context.Context, p protocol.SessionForkParams) (protocol.SessionForkResult, error) {
	if err := checkFork(&p); err != nil {
		return protocol.SessionForkResult{}, err
	}
	m.mu.Lock()
	src, live := m.sessions[p.SessionID]
	m.mu.Unlock()
	id := newID("sess_")
	if m.store == nil {
		// Nothing is persisted: the fork copies the live session's history.
		if !live {
			return protocol.SessionForkResult{}, unknown(p.SessionID)
		}
		cwd := p.Cwd
		if cwd == "" {
			cwd = src.cwd
		}
		roots, err := workspace.NewRoots(cwd, src.dirs...)
		if err != nil {
			return protocol.SessionForkResult{}, &ParamError{Field: "cwd", Message: err.Error()}
		}
		s := m.newSession(id, roots, cwd, src.dirs)
		src.mu.Lock()
		s.history = append(s.history, src.history...)
		s.mode, s.providerID, s.thought, s.title, s.titled = src.mode, src.providerID, src.thought, src.title, src.titled
		s.review = src.review
		src.mu.Unlock()
		if err := m.add(s); err != nil {
			return protocol.SessionForkResult{}, err
		}
		s.announceCommands()
		answered := make(chan struct{})
		close(answered)
		s.startMCP(p.MCPServers, answered)
		return protocol.SessionForkResult{SessionID: id, ConfigOptions: s.configOptions(), Modes: s.modes()}, nil
	}
	cwd, err := m.store.fork(p.SessionID, id, p.Cwd)
	if errors.Is(err, os.ErrNotExist) {
		return protocol.SessionForkResult{}, unknown(p.SessionID)
	}
	if err != nil {
		return protocol.SessionForkResult{}, fmt.Errorf("session store: %w", err)
	}
	res, err := m.open(ctx, protocol.SessionLoadParams{SessionID: id, Cwd: cwd, MCPServers: p.MCPServers}, false)
	if err != nil {
		_ = m.store.remove(id)
		return protocol.SessionForkResult{}, err
	}
	return protocol.SessionForkResult{SessionID: id, ConfigOptions: res.ConfigOptions, Modes: res.Modes}, nil
}

// fork writes the transcript of a new session id holding src's records after a header of its
// own (cwd, by default src's). It is written aside, synced and renamed into place, so a crash
// leaves either no fork or a whole one. A torn last line of src is left out.
func (st *store) fork(src, id, cwd string) (string, error) {
	if !validID(src) {
		return "", os.ErrNotExist
	}
	data, err := os.ReadFile(st.path(src))
	if err != nil {
		return "", err
	}
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		data = data[:i+1]
	} else {
		data = nil
	}
	var h header
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	var out bytes.Buffer
	first := true
	for sc.Scan() {
		line := sc.Bytes()
		if first {
			first = false
			var r record
			if err := json.Unmarshal(line, &r); err != nil || r.T != recHeader || r.Header == nil {
				return "", fmt.Errorf("transcript of %s has no header", src)
			}
			h = *r.Header
			if cwd == "" {
				cwd = h.Cwd
			}
			nh := header{ID: id, Cwd: cwd, Dirs: h.Dirs, Created: time.Now().UTC()}
			b, err := json.Marshal(record{T: recHeader, At: nh.Created, Header: &nh})
			if err != nil {
				return "", err
			}
			out.Write(b)
			out.WriteByte('\n')
			continue
		}
		out.Write(line)
		out.WriteByte('\n')
	}
	if first {
		return "", fmt.Errorf("transcript of %s is empty", src)
	}
	tmp, err := os.CreateTemp(st.dir, id+".*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out.Bytes()); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return cwd, os.Rename(tmp.Name(), st.path(id))
}
