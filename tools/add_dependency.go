package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

type addDependencyIn struct {
	Ecosystem      string `json:"ecosystem" schema:"enum=go,enum=npm"`
	Package        string `json:"package" schema:"maxLength=300"`
	Version        string `json:"version,omitempty" schema:"maxLength=100"`
	Dev            bool   `json:"dev,omitempty"`
	Path           string `json:"path,omitempty" schema:"maxLength=4096"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" schema:"minimum=1,maximum=3600"`
}

func (in addDependencyIn) title() string {
	if in.Package == "" {
		return ""
	}
	return "Add dependency " + in.Package
}

// AddDependency is the add_dependency tool.
var AddDependency Tool = &typed[addDependencyIn]{spec: Spec{Name: "add_dependency", Effect: EffectExec, Kind: "execute", Title: "Add dependency"}, run: addDependency}

// Names and versions become single argv elements, never shell text; these patterns also keep
// them from being read as flags (a leading "-") or as paths and URLs the user did not mean.
var (
	goModulePath = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*(/[A-Za-z0-9._~+-]+)*$`)
	goVersion    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]*$`)
	npmName      = regexp.MustCompile(`^(@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*$`)
	npmRange     = regexp.MustCompile(`^[A-Za-z0-9^~<>=*|.+_ -]+$`)
	npmKey       = regexp.MustCompile(`^[A-Za-z0-9@_$][A-Za-z0-9@_$.:/\[\]-]*$`)
	goLangVer    = regexp.MustCompile(`^1\.[0-9]+(\.[0-9]+)?$`)
)

const depTimeout = 300

func addDependency(ctx context.Context, env *Env, in addDependencyIn) Result {
	var argv []string
	switch in.Ecosystem {
	case "go":
		if !goModulePath.MatchString(in.Package) {
			return Errorf("field package: %q is not a Go module path (like github.com/owner/repo)", in.Package)
		}
		if in.Version != "" && !goVersion.MatchString(in.Version) {
			return Errorf("field version: %q is not a Go version or query (like v1.2.3 or latest)", in.Version)
		}
		if in.Dev {
			return Errorf("field dev applies to npm only; Go has no dev dependencies")
		}
		target := in.Package
		if in.Version != "" {
			target += "@" + in.Version
		}
		argv = []string{"go", "get", target}
	case "npm":
		if !npmName.MatchString(in.Package) {
			return Errorf("field package: %q is not an npm package name (like lodash or @scope/name)", in.Package)
		}
		if in.Version != "" && (!npmRange.MatchString(in.Version) || strings.HasPrefix(in.Version, "-")) {
			return Errorf("field version: %q is not an npm version or range (like ^4.17.0)", in.Version)
		}
		save := "--save"
		if in.Dev {
			save = "--save-dev"
		}
		target := in.Package
		if in.Version != "" {
			target += "@" + in.Version
		}
		argv = []string{"npm", "install", save, "--no-fund", "--no-audit", target}
	}
	dir, bad := moduleDir(env, in.Path, in.Ecosystem)
	if bad != nil {
		return *bad
	}
	box, bad := outsideSandbox(env, "add_dependency", depOutside[in.Ecosystem])
	if bad != nil {
		return *bad
	}
	return execTool(ctx, env, "path", dir, argv, nil, "", orDefault(in.TimeoutSeconds, depTimeout), 0, box)
}

// depOutside says why a package manager's download runs outside the sandbox: the sandbox has no
// network and cannot write the caches, and npm runs what the packages' install scripts say.
var depOutside = map[string]string{
	"go":  "it downloads modules and writes the module cache outside the project",
	"npm": "it downloads packages, writes npm's cache outside the project and runs the packages' install scripts",
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

// moduleDir finds the nearest directory at or above path, inside its root, holding the
// ecosystem's manifest.
func moduleDir(env *Env, path, ecosystem string) (string, *Result) {
	if path == "" {
		path = "."
	}
	start, bad := resolve(env, "path", path, false)
	if bad != nil {
		return "", bad
	}
	manifest := map[string]string{"go": "go.mod", "npm": "package.json"}[ecosystem]
	root := rootOf(env, start)
	dir := start
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		dir = filepath.Dir(dir)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, manifest)); err == nil {
			return dir, nil
		}
		if dir == root || !strings.HasPrefix(dir, root) {
			break
		}
		dir = filepath.Dir(dir)
	}
	r := Errorf("field path: no %s in %s or the directories above it inside the workspace; create one first (for Go: run_program go mod init <module>; for npm: npm init -y)", manifest, rel(env, start))
	return "", &r
}
