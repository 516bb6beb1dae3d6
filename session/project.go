package session

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
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

// signedState is a project's state file on disk: the state's JSON and an HMAC-SHA256 over it,
// keyed by a secret kept outside the state directory (projects.keyFile). A program the user
// let run can write the state directory (it is the user's); without the key it cannot write a
// state agentd honours, so one approved program cannot turn the project into auto mode with
// "*" grants unnoticed.
type signedState struct {
	State json.RawMessage `json:"state"`
	MAC   string          `json:"mac"`
}

// projects persists projectState under <StateDir>/projects, one small JSON file per project,
// replaced atomically on every change.
type projects struct {
	dir string
	log *zap.Logger
	// key signs the state files (its file is 0600, in agentd's config directory, not the
	// state directory).
	key *stateKey
	// notify tells the sessions of path that its state file was refused (set by the manager).
	notify func(path, msg string)

	mu    sync.Mutex
	cache map[string]*cachedProject
	// refused holds, per project, why its state file was not honoured, until agentd writes
	// the project's state again.
	refused map[string]string
	pending [][2]string
}

// cachedProject is a project's state with the file's modification time it was read at, so a
// change made by another agentd process (another editor) is seen on the next decision.
type cachedProject struct {
	st  *projectState
	mod time.Time
}

func newProjects(stateDir, keyFile string, log *zap.Logger) *projects {
	p := &projects{log: log, key: &stateKey{file: keyFile}, cache: map[string]*cachedProject{}, refused: map[string]string{}}
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
			if disk, err := p.open(b); err != nil {
				p.refuse(path, err)
			} else if disk.Path == path {
				st = disk
			}
		}
	}
	p.cache[path] = &cachedProject{st: st, mod: mod}
	return st
}

// open checks a state file's signature and decodes it.
func (p *projects) open(b []byte) (*projectState, error) {
	var st projectState
	if err := p.key.open(b, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// seal is v's JSON in a signed state file.
func (sk *stateKey) seal(v any) ([]byte, error) {
	inner, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	key, err := sk.get()
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(signedState{State: inner, MAC: hex.EncodeToString(sign(key, inner))}, "", "  ")
}

// open checks a signed state file and decodes its state into v.
func (sk *stateKey) open(b []byte, v any) error {
	var f signedState
	if err := json.Unmarshal(b, &f); err != nil || len(f.State) == 0 || f.MAC == "" {
		return errors.New("it is not a state file agentd signed")
	}
	key, err := sk.get()
	if err != nil {
		return err
	}
	// MarshalIndent indented the state too: the signature is over its compact form.
	var state bytes.Buffer
	if err := json.Compact(&state, f.State); err != nil {
		return err
	}
	want, err := hex.DecodeString(f.MAC)
	if err != nil || !hmac.Equal(want, sign(key, state.Bytes())) {
		return errors.New("its signature does not match: it was changed outside agentd")
	}
	return json.Unmarshal(f.State, v)
}

// refuse records and reports a state file that is not honoured; p.mu must be held.
func (p *projects) refuse(path string, err error) {
	msg := fmt.Sprintf("agentd's remembered permission mode and \"always\" answers for %s (%s) were not applied: %v. "+
		"The project starts from the default mode with no grants; agentd writes a fresh file the next time you change them.",
		path, p.file(path), err)
	p.log.Warn("project state refused", zap.String("project", path), zap.Error(err))
	if p.refused[path] == msg {
		return
	}
	p.refused[path] = msg
	p.pending = append(p.pending, [2]string{path, msg})
}

// flush tells the sessions about the refusals found under the lock; it runs once p.mu is
// released, so a notice that waits on the client never holds the project state.
func (p *projects) flush() {
	p.mu.Lock()
	pending := p.pending
	p.pending = nil
	p.mu.Unlock()
	if p.notify == nil {
		return
	}
	for _, n := range pending {
		p.notify(n[0], n[1])
	}
}

// refusal is why path's state file was not honoured ("" when it was, or there is none).
func (p *projects) refusal(path string) string {
	defer p.flush()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.get(path)
	return p.refused[path]
}

func sign(key, b []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(b)
	return h.Sum(nil)
}

// stateKey is the secret agentd signs its state files with (the per-project mode and grants, the
// tool-calling memo), read from or created in its file on first use.
type stateKey struct {
	file string

	mu  sync.Mutex
	key []byte
}

// get returns the key, creating the key file (0600) on first use.
func (sk *stateKey) get() ([]byte, error) {
	sk.mu.Lock()
	defer sk.mu.Unlock()
	if sk.key != nil {
		return sk.key, nil
	}
	if sk.file == "" {
		return nil, errors.New("no key file to check it with")
	}
	b, err := os.ReadFile(sk.file)
	if errors.Is(err, fs.ErrNotExist) {
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(sk.file), 0o700); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(sk.file, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			_, werr := f.Write([]byte(hex.EncodeToString(k)))
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(sk.file)
				return nil, werr
			}
			sk.key = k
			return k, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		// Another agentd created it first: use theirs.
		b, err = os.ReadFile(sk.file)
	}
	if err != nil {
		return nil, err
	}
	k, err := hex.DecodeString(string(b))
	if err != nil || len(k) < 16 {
		return nil, fmt.Errorf("the key file %s is malformed", sk.file)
	}
	sk.key = k
	return k, nil
}

// save writes the state of path; p.mu must be held.
func (p *projects) save(st *projectState) {
	if p.dir == "" {
		return
	}
	b, err := p.key.seal(st)
	if err != nil {
		p.log.Warn("project state: not saved", zap.Error(err))
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
	delete(p.refused, st.Path)
	if fi, err := os.Stat(p.file(st.Path)); err == nil {
		p.cache[st.Path] = &cachedProject{st: st, mod: fi.ModTime()}
	}
}

func (p *projects) mode(path, def string) string {
	defer p.flush()
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
	defer p.flush()
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
	defer p.flush()
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.get(path).Grants)
}

// removeGrants forgets the project's grants that drop says to and reports whether there were any.
func (p *projects) removeGrants(path string, drop func(grant) bool) bool {
	defer p.flush()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.get(path)
	n := len(st.Grants)
	st.Grants = slices.DeleteFunc(st.Grants, drop)
	if len(st.Grants) == n {
		return false
	}
	p.save(st)
	return true
}

func (p *projects) addGrant(path string, g grant) {
	defer p.flush()
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.get(path)
	if slices.ContainsFunc(st.Grants, g.Equal) {
		return
	}
	st.Grants = append(st.Grants, g)
	p.save(st)
}
