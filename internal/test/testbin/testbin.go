// Package testbin builds the agentd binary for the tests that drive it over its stdin and stdout
// (internal/test/acceptance, cmd/agentd, editorbridge/fakeeditor's scenarios), once for all of them.
//
// Each test package used to run its own `go build`: three links of the same binary, 74 s of a
// cold run on the 2-CPU build VM (issue 11). The binary now goes into a cache directory keyed
// by a hash of the module's non-test sources, go.mod, go.sum, the Go version and the build
// flags, so the first package that needs it builds it and every other package, in the same
// `go test` run or a later one with the same sources, finds it there. A lock file keeps
// packages that start together from linking it twice.
//
// The build is static (CGO_ENABLED=0), as released, except with -race, which needs cgo.
package testbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// EnvBin, when set, is an agentd binary to use instead of building one (a release, a
// cross-check against the contract).
const EnvBin = "AGENTD_TEST_BIN"

var (
	mu    sync.Mutex
	built = map[bool]string{}
)

// Agentd returns the path of an agentd binary built from this module's sources, building it
// when the cache has none for them. race builds it with -race.
func Agentd(race bool) (string, error) {
	if bin := os.Getenv(EnvBin); bin != "" {
		return bin, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if p, ok := built[race]; ok {
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	key, err := sourceKey(root, race)
	if err != nil {
		return "", err
	}
	base, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, key)
	bin := filepath.Join(dir, "agentd")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if err := buildLocked(root, "./cmd/agentd", dir, bin, race); err != nil {
		return "", err
	}
	now := time.Now()
	os.Chtimes(dir, now, now) // in use: kept by prune
	built[race] = bin
	prune(base, key)
	return bin, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %v", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("testbin: not inside the agentd module")
	}
	return filepath.Dir(mod), nil
}

// skipDirs hold nothing the binary is built from.
var skipDirs = map[string]bool{".git": true, "clients": true, "testdata": true, "docs": true, "bench": true, "node_modules": true}

// sourceKey hashes every file the build can read: all non-test files under the module root
// (sources and what they embed) outside skipDirs, with their paths, plus the build settings.
func sourceKey(root string, race bool) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s %s/%s race=%v\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, race)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || strings.HasSuffix(d.Name(), "_test.go") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		rel, _ := filepath.Rel(root, path)
		fmt.Fprintf(h, "%s\x00", filepath.ToSlash(rel))
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		h.Write([]byte{0})
		return nil
	})
	if err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil))[:24], nil
}

func cacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "agentd-testbin")
	return dir, os.MkdirAll(dir, 0o755)
}

// buildLocked builds pkg (relative to root) into bin unless it exists, holding dir/lock so that concurrent test packages
// wait for one build instead of each running their own. A lock older than staleLock is taken
// to be left by a killed run.
func buildLocked(root, pkg, dir, bin string, race bool) error {
	if _, err := os.Stat(bin); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock := filepath.Join(dir, "lock")
	for {
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err == nil {
			f.Close()
			break
		}
		if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if fi, err := os.Stat(lock); err == nil && time.Since(fi.ModTime()) > staleLock {
			os.Remove(lock)
			continue
		}
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(bin); err == nil {
			return nil
		}
	}
	defer os.Remove(lock)
	if _, err := os.Stat(bin); err == nil {
		return nil
	}
	tmp := bin + ".tmp"
	args := []string{"build", "-o", tmp}
	if race {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = os.Environ()
	if !race {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
	}
	return os.Rename(tmp, bin)
}

const staleLock = 5 * time.Minute

// prune removes the binaries of other sources beyond the keepRecent most recently used, once
// they have not been used for an hour (a package still running tests may start the binary it
// was given at any time until it ends). Each edit of the sources makes a new key, so without
// this the cache would grow by a binary (17-30 MB) per edited test run.
func prune(base, keep string) {
	ents, err := os.ReadDir(base)
	if err != nil {
		return
	}
	type entry struct {
		name string
		used time.Time
	}
	var es []entry
	for _, e := range ents {
		if e.Name() == keep || !e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil {
			es = append(es, entry{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return b.used.Compare(a.used) })
	for i, e := range es {
		if i >= keepRecent && time.Since(e.used) > time.Hour {
			os.RemoveAll(filepath.Join(base, e.name))
		}
	}
}

const keepRecent = 8
