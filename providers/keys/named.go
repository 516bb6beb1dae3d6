package keys

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/zalando/go-keyring"

	"github.com/agentd-dev/agentd/config"
)

// Named is a secret store filed by an account name of the caller's choosing rather than by
// origin: the MCP servers' OAuth tokens, filed by issuer and resource. Like Auto it is the OS
// keyring (under its own service name) when one answers, else a JSON file of mode 0600; the
// choice is made on first use. A file others can read is refused, not used.
type Named struct {
	// Service is the keyring service name.
	Service string
	// Path is the fallback file.
	Path string
	// Probe says whether the keyring answers (probeKeyring when nil).
	Probe func() error

	once sync.Once
	ring bool
	mu   sync.Mutex // the file
}

// DefaultNamed is agentd's named store for service under config.ConfigDir, file NAME.json;
// AGENTD_SECRET_STORE=file keeps to the file.
func DefaultNamed(service, name string) *Named {
	n := &Named{Service: service, Path: filepath.Join(config.ConfigDir(), name+".json")}
	if os.Getenv("AGENTD_SECRET_STORE") == "file" {
		n.Probe = func() error { return errors.New("AGENTD_SECRET_STORE=file") }
	}
	return n
}

func (n *Named) useRing() bool {
	n.once.Do(func() {
		probe := n.Probe
		if probe == nil {
			probe = probeKeyring
		}
		n.ring = probe() == nil
	})
	return n.ring
}

// Where names the store in use.
func (n *Named) Where() string {
	if n.useRing() {
		return "the OS keyring"
	}
	return n.Path
}

// Get returns the secret filed under account.
func (n *Named) Get(account string) (string, bool, error) {
	if n.useRing() {
		v, err := keyring.Get(n.Service, account)
		if errors.Is(err, keyring.ErrNotFound) {
			return "", false, nil
		}
		return v, err == nil && v != "", err
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	m, err := n.load()
	if err != nil {
		return "", false, err
	}
	v, ok := m[account]
	return v, ok && v != "", nil
}

// Set files value under account, replacing what was there.
func (n *Named) Set(account, value string) error {
	if n.useRing() {
		return keyring.Set(n.Service, account, value)
	}
	return n.put(account, value)
}

// Delete forgets account; forgetting what is not there is not an error.
func (n *Named) Delete(account string) error {
	if n.useRing() {
		if err := keyring.Delete(n.Service, account); err != nil && !errors.Is(err, keyring.ErrNotFound) {
			return err
		}
		return nil
	}
	return n.put(account, "")
}

// load reads the file, checking the mode of the file it reads (opened once).
func (n *Named) load() (map[string]string, error) {
	m := map[string]string{}
	f, err := os.Open(n.Path)
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s is readable by others; agentd does not use the secrets in it (chmod 600 it, or sign in again)", n.Path)
	}
	b, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: not a JSON object of names to secrets", n.Path)
	}
	return m, nil
}

func (n *Named) put(account, value string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	m, err := n.load()
	if err != nil {
		return err
	}
	if value == "" {
		delete(m, account)
	} else {
		m[account] = value
	}
	return writeSecrets(n.Path, m)
}
