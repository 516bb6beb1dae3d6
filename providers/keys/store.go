// Package keys owns provider API keys: where agentd keeps them (the OS keyring, else a file of
// mode 0600), where a provider's key is looked for (agent/providers/set headers, the environment,
// agentd's store, the client's store), and the rule that holds across all of them: a key goes
// only to the origin it belongs to. Keys are never logged; ErrorRedactor keeps them out of the
// messages a provider's server sends back.
package keys

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zalando/go-keyring"

	"github.com/agentd-dev/agentd/config"
	"github.com/agentd-dev/agentd/providers"
)

// Store is a secret store of keys filed by origin (scheme://host[:port]).
type Store interface {
	// Get returns the key filed for origin (any URL under it is accepted).
	Get(origin string) (key string, ok bool, err error)
	// Set files key under origin, replacing any key there.
	Set(origin, key string) error
	// Delete forgets origin's key; forgetting a key that is not there is not an error.
	Delete(origin string) error
	// Where names the store for messages: "the OS keyring", or the file's path.
	Where() string
}

// Service is the keyring service name agentd files its keys under; the account is the origin.
const Service = "agentd"

// normalize turns an origin or any URL under it into the origin keys are filed under.
func normalize(origin string) (string, error) {
	o := providers.Origin(origin)
	if o == "" {
		return "", fmt.Errorf("%q is not an http(s) URL", origin)
	}
	return o, nil
}

// Keyring is the OS keyring: Secret Service on Linux, Keychain on macOS, Windows Credential
// Manager (github.com/zalando/go-keyring; keyring.MockInit replaces it in tests).
type Keyring struct{}

func (Keyring) Get(origin string) (string, bool, error) {
	o, err := normalize(origin)
	if err != nil {
		return "", false, err
	}
	v, err := keyring.Get(Service, o)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return v, v != "", nil
}

func (Keyring) Set(origin, key string) error {
	o, err := normalize(origin)
	if err != nil {
		return err
	}
	return keyring.Set(Service, o, key)
}

func (Keyring) Delete(origin string) error {
	o, err := normalize(origin)
	if err != nil {
		return err
	}
	if err := keyring.Delete(Service, o); err != nil && !errors.Is(err, keyring.ErrNotFound) {
		return err
	}
	return nil
}

func (Keyring) Where() string { return "the OS keyring" }

// File is a JSON object from origin to key in a file of mode 0600. It is the store where no
// keyring answers, and keys filed there before agentd used the keyring are still read.
type File struct {
	Path string
	mu   sync.Mutex
}

// Where is the file's path.
func (s *File) Where() string { return s.Path }

func (s *File) load() (map[string]string, error) {
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return s.parse(b)
}

func (s *File) parse(b []byte) (map[string]string, error) {
	m := map[string]string{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of origin to key", s.Path)
	}
	return m, nil
}

// Get returns the key filed for origin. The mode is checked on the file that is read, opened
// once: Set replaces the file by rename, so a separate Stat could look at another file. A file
// others can read is refused rather than used: the key in it may have leaked.
func (s *File) Get(origin string) (string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := os.Open(s.Path)
	if errors.Is(err, os.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return "", false, fmt.Errorf("%s is readable by others; agentd does not use keys from it (chmod 600 it, or store the key again)", s.Path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return "", false, err
	}
	m, err := s.parse(b)
	if err != nil {
		return "", false, err
	}
	for k, v := range m {
		if providers.KeyAllowed(k, origin) && v != "" {
			return v, true, nil
		}
	}
	return "", false, nil
}

// Set files key under origin, creating the file with mode 0600.
func (s *File) Set(origin, key string) error { return s.put(origin, key) }

// Delete forgets origin's key.
func (s *File) Delete(origin string) error { return s.put(origin, "") }

func (s *File) put(origin, key string) error {
	o, err := normalize(origin)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m, err := s.load()
	if err != nil {
		return err
	}
	for k := range m {
		if providers.KeyAllowed(k, o) {
			delete(m, k) // also a spelling of the same origin filed earlier (":443")
		}
	}
	if key != "" {
		m[o] = key
	}
	return writeSecrets(s.Path, m)
}

// writeSecrets replaces the file at path by m, written with mode 0600 and renamed into place;
// an empty m removes the file.
func writeSecrets(path string, m map[string]string) error {
	if len(m) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Auto is agentd's own store: the OS keyring when one answers, else the file. Which one is
// decided on first use (a probe of the keyring, bounded in time), not at start-up, so a daemon
// that never needs a stored key never talks to the keyring. Keys in the file stay readable
// after a keyring appears.
type Auto struct {
	File *File
	// Keyring is the keyring store (Keyring{} by default; tests inject another).
	Keyring Store
	// Probe says whether the keyring answers (by default: a lookup that ends in "not found"
	// within two seconds).
	Probe func() error

	once    sync.Once
	ring    Store // nil when no keyring answered
	ringErr error
	// fileOnly is AGENTD_SECRET_STORE=file.
	fileOnly bool
}

// Default is agentd's own store under config.ConfigDir: the keyring, else secrets.json there.
// AGENTD_SECRET_STORE=file keeps to the file (for headless machines and tests).
func Default() *Auto {
	a := &Auto{File: &File{Path: filepath.Join(config.ConfigDir(), "secrets.json")}, Keyring: Keyring{}}
	if os.Getenv("AGENTD_SECRET_STORE") == "file" {
		a.Probe = func() error { return errors.New("AGENTD_SECRET_STORE=file") }
		a.fileOnly = true
	}
	return a
}

// Local reports, without asking the keyring, that every lookup stays in this process and its
// file: the store keeps to the file (AGENTD_SECRET_STORE=file), or there is no D-Bus session
// bus for the default probe to reach a keyring over. When it is false a lookup may wait on
// another process (a D-Bus round trip, or on macOS a run of /usr/bin/security).
func (a *Auto) Local() bool {
	return a.fileOnly || a.Probe == nil && sessionBus() != nil
}

// Local is true: the file is read in this process.
func (s *File) Local() bool { return true }

func probeKeyring() error {
	if err := sessionBus(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		_, err := keyring.Get(Service, "agentd-probe")
		if errors.Is(err, keyring.ErrNotFound) {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Second):
		return errors.New("the OS keyring did not answer within 2 s")
	}
}

func (a *Auto) keyring() Store {
	a.once.Do(func() {
		probe := a.Probe
		if probe == nil {
			probe = probeKeyring
		}
		if a.Keyring == nil {
			a.Keyring = Keyring{}
		}
		if a.ringErr = probe(); a.ringErr == nil {
			a.ring = a.Keyring
		}
	})
	return a.ring
}

// Fallback says why the file is used instead of the keyring ("" when the keyring answers).
func (a *Auto) Fallback() string {
	if a.keyring() != nil {
		return ""
	}
	return fmt.Sprintf("no OS keyring answered (%v), so keys are kept in %s (mode 0600)", a.ringErr, a.File.Path)
}

// Where names the store in use.
func (a *Auto) Where() string {
	if r := a.keyring(); r != nil {
		return r.Where()
	}
	return a.File.Where()
}

// Get looks in the keyring, then in the file.
func (a *Auto) Get(origin string) (string, bool, error) {
	if r := a.keyring(); r != nil {
		if v, ok, err := r.Get(origin); err != nil || ok {
			return v, ok, err
		}
	}
	return a.File.Get(origin)
}

// Set files the key in the keyring (and drops an older copy from the file), else in the file.
func (a *Auto) Set(origin, key string) error {
	if r := a.keyring(); r != nil {
		if err := r.Set(origin, key); err != nil {
			return err
		}
		if _, ok, _ := a.File.Get(origin); ok {
			return a.File.Delete(origin)
		}
		return nil
	}
	return a.File.Set(origin, key)
}

// Delete forgets the key in both.
func (a *Auto) Delete(origin string) error {
	if r := a.keyring(); r != nil {
		if err := r.Delete(origin); err != nil {
			return err
		}
	}
	return a.File.Delete(origin)
}
