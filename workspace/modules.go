package workspace

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Module is a build manifest found in the workspace: the file, its ecosystem and, when the
// manifest names it cheaply, the module's name.
type Module struct {
	Path string // absolute
	Kind string // "go", "npm", "cargo", "python", "gradle", "maven", …
	Name string // "" when the manifest names none or the name is not a plain identifier
}

// manifestKind is the ecosystem of a manifest's file name, if it is one: a switch, where a map
// literal would be built by the package's init at every start.
func manifestKind(name string) (string, bool) {
	switch name {
	case "go.mod":
		return "go", true
	case "package.json":
		return "npm", true
	case "Cargo.toml":
		return "cargo", true
	case "pyproject.toml":
		return "python", true
	case "setup.py":
		return "python", true
	case "build.gradle":
		return "gradle", true
	case "build.gradle.kts":
		return "gradle", true
	case "pom.xml":
		return "maven", true
	case "composer.json":
		return "composer", true
	case "Gemfile":
		return "ruby", true
	case "mix.exs":
		return "elixir", true
	case "deno.json":
		return "deno", true
	case "CMakeLists.txt":
		return "cmake", true
	case "Package.swift":
		return "swift", true
	case "pubspec.yaml":
		return "dart", true
	}
	return "", false
}

// IsManifest reports whether a file of this name is one FindModules looks for.
func IsManifest(path string) bool {
	_, ok := manifestKind(filepath.Base(path))
	return ok
}

// skipDir reports whether FindModules never enters a directory of this name: dependencies,
// build output, caches.
func skipDir(name string) bool {
	switch name {
	case "node_modules", "vendor", "target", "build", "dist", "out",
		"__pycache__", "venv", "testdata", "third_party":
		return true
	}
	return false
}

const (
	// moduleDepth is how far below a root FindModules looks: the root and two levels down.
	moduleDepth = 2
	// maxModuleDirs bounds the directories read per call, so a huge tree costs the same as a
	// small one.
	maxModuleDirs = 400
	// maxManifestRead bounds what is read of a manifest to find its name.
	maxManifestRead = 16 << 10
)

// FindModules lists the build manifests in each root and up to two directory levels below it,
// roots in order and breadth first within one, without following symlinks or entering hidden,
// dependency or build directories. It reads at most a few hundred directories, so it stays
// cheap on any tree; what it cannot read it skips.
func FindModules(roots []string) []Module {
	var out []Module
	budget := maxModuleDirs
	seen := map[string]bool{}
	for _, root := range roots {
		level := []string{root}
		for depth := 0; depth <= moduleDepth && len(level) > 0 && budget > 0; depth++ {
			var next []string
			for _, dir := range level {
				if budget == 0 {
					break
				}
				budget--
				entries, err := os.ReadDir(dir)
				if err != nil {
					continue
				}
				for _, e := range entries {
					name := e.Name()
					p := filepath.Join(dir, name)
					switch {
					case e.Type().IsDir():
						if depth < moduleDepth && !strings.HasPrefix(name, ".") && !skipDir(name) && !seen[p] {
							seen[p] = true
							next = append(next, p)
						}
					case e.Type().IsRegular():
						if kind, ok := manifestKind(name); ok {
							out = append(out, Module{Path: p, Kind: kind, Name: moduleName(p, name)})
						}
					}
				}
			}
			slices.Sort(next)
			level = next
		}
	}
	return out
}

// plainName says what a module name may look like to be shown: a manifest is the repository's
// data, and a name is put in the model's context, so anything beyond an identifier is dropped:
// 1 to 128 of A-Z a-z 0-9 @ / . _ : + ~ -. (A loop, not a regexp: `{1,128}` compiles to 128
// copies of the class, which cost every start of agentd 130 KB and 1,800 allocations.)
func plainName(name string) bool {
	if name == "" || len(name) > 128 {
		return false
	}
	for _, r := range name {
		ok := r < 0x80 && (r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("@/._:+~-", r))
		if !ok {
			return false
		}
	}
	return true
}

// The name lines of go.mod and of a TOML table.
var (
	goModule = regexp.MustCompile(`^module\s+"?([^\s"]+)"?`)
	tomlName = regexp.MustCompile(`^name\s*=\s*["']([^"']+)["']`)
)

// moduleName reads the module's name from the start of its manifest, for the manifests that
// state it plainly.
func moduleName(path, base string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	r := io.LimitReader(f, maxManifestRead)
	var name string
	switch base {
	case "go.mod":
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := goModule.FindStringSubmatch(strings.TrimSpace(sc.Text())); m != nil {
				name = m[1]
				break
			}
		}
	case "package.json", "composer.json":
		data, _ := io.ReadAll(r)
		var v struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(data, &v) == nil {
			name = v.Name
		}
	case "Cargo.toml", "pyproject.toml":
		// The name of the [package] (Cargo) or [project] / [tool.poetry] (Python) table.
		sc := bufio.NewScanner(r)
		in := false
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if strings.HasPrefix(line, "[") {
				in = line == "[package]" || line == "[project]" || line == "[tool.poetry]"
				continue
			}
			if m := tomlName.FindStringSubmatch(line); in && m != nil {
				name = m[1]
				break
			}
		}
	}
	if !plainName(name) {
		return ""
	}
	return name
}
