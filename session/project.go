package session

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentd-dev/agentd/config"
)

// projectState is what agentd remembers per project (keyed by the session's cwd): the last
// permission mode and the "always" answers.
type projectState struct {
	Path   string  `json:"path"`
	Mode   string  `json:"mode,omitempty"`
	Grants []grant `json:"grants,omitempty"`
}

// projects persists projectState under <StateDir>/projects, one small JSON file per project,
// replaced atomically on every change.
type projects struct {
	dir string
	log *zap.Logger

	mu    sync.Mutex
	cache map[string]*cachedProject
}

// cachedProject is a project's state with the file's modification time it was read at, so a
// change made by another agentd process (another editor) is seen on the next decision.
type cachedProject struct {
	st  *projectState
	mod time.Time
}

func newProjects(stateDir string, log *zap.Logger) *projects {
	p := &projects{log: log, cache: map[string]*cachedProject{}}
	if stateDir != "" {
		p.dir = filepath.Join(stateDir, "projects")
	}
	return p
}

func (p *projects) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(p.dir, hex.EncodeToString(sum[:12])+".json")
}

// get returns the state of path, reread when its file changed; p.mu must be held.
func (p *projects) get(path string) *projectState {
	var mod time.Time
	if p.dir != "" {
		if fi, err := os.Stat(p.file(path)); err == nil {
			mod = fi.ModTime()
		}
	}
	if c, ok := p.cache[path]; ok && c.mod.Equal(mod) {
		return c.st
	}
	st := &projectState{Path: path}
	if !mod.IsZero() {
		if b, err := os.ReadFile(p.file(path)); err == nil {
			var disk projectState
			if json.Unmarshal(b, &disk) == nil && disk.Path == path {
				st = &disk
			}
		}
	}
	p.cache[path] = &cachedProject{st: st, mod: mod}
	return st
}

// save writes the state of path; p.mu must be held.
func (p *projects) save(st *projectState) {
	if p.dir == "" {
		return
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		p.log.Warn("project state", zap.Error(err))
		return
	}
	tmp, err := os.CreateTemp(p.dir, ".tmp-*")
	if err != nil {
		p.log.Warn("project state", zap.Error(err))
		return
	}
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if werr != nil || serr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if err := os.Rename(tmp.Name(), p.file(st.Path)); err != nil {
		os.Remove(tmp.Name())
		p.log.Warn("project state", zap.Error(err))
		return
	}
	if fi, err := os.Stat(p.file(st.Path)); err == nil {
		p.cache[st.Path] = &cachedProject{st: st, mod: fi.ModTime()}
	}
}

func (p *projects) mode(path, def string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m := p.get(path).Mode; config.ValidMode(m) {
		return m
	}
	if config.ValidMode(def) {
		return def
	}
	return ModeAsk
}

func (p *projects) setMode(path, mode string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.get(path)
	if st.Mode == mode {
		return
	}
	st.Mode = mode
	p.save(st)
}

func (p *projects) grants(path string) []grant {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.get(path).Grants)
}

func (p *projects) addGrant(path string, g grant) {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.get(path)
	if slices.ContainsFunc(st.Grants, g.Equal) {
		return
	}
	st.Grants = append(st.Grants, g)
	p.save(st)
}
