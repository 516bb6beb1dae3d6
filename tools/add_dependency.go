package tools

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

//go:embed add_dependency.md
var addDependencyDoc string

//go:embed edit_module_config.md
var editModuleConfigDoc string

type addDependencyIn struct {
	Ecosystem      string `json:"ecosystem" jsonschema:"description=Package ecosystem,enum=go,enum=npm"`
	Package        string `json:"package" jsonschema:"description=Go module path or npm package name,maxLength=300"`
	Version        string `json:"version,omitempty" jsonschema:"description=Version or range (default: latest),maxLength=100"`
	Dev            bool   `json:"dev,omitempty" jsonschema:"description=npm: add to devDependencies"`
	Path           string `json:"path,omitempty" jsonschema:"description=Directory in the module or package (default: the working directory),maxLength=4096"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"description=Kill the command after this many seconds (default 300),minimum=1,maximum=3600"`
}

func (in addDependencyIn) title() string {
	if in.Package == "" {
		return ""
	}
	return "Add dependency " + in.Package
}

type editModuleConfigIn struct {
	Ecosystem      string `json:"ecosystem" jsonschema:"description=Package ecosystem,enum=go,enum=npm"`
	Action         string `json:"action" jsonschema:"description=What to change,enum=require,enum=droprequire,enum=replace,enum=dropreplace,enum=go_version,enum=tidy,enum=remove,enum=set,enum=delete"`
	Module         string `json:"module,omitempty" jsonschema:"description=Go module path or npm package name the action is about,maxLength=300"`
	Version        string `json:"version,omitempty" jsonschema:"description=Version for require and go_version,maxLength=100"`
	Replacement    string `json:"replacement,omitempty" jsonschema:"description=For replace: a local directory or module@version,maxLength=1000"`
	Key            string `json:"key,omitempty" jsonschema:"description=For npm set and delete: a package.json key path such as scripts.test,maxLength=300"`
	Value          string `json:"value,omitempty" jsonschema:"description=For npm set: the value,maxLength=10000"`
	Path           string `json:"path,omitempty" jsonschema:"description=Directory in the module or package (default: the working directory),maxLength=4096"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"description=Kill the command after this many seconds (default 300),minimum=1,maximum=3600"`
}

func (in editModuleConfigIn) title() string {
	if in.Action == "" {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("Module config: %s %s", in.Action, in.Module))
}

// AddDependency is the add_dependency tool.
var AddDependency = New(Spec{Name: "add_dependency", Description: addDependencyDoc, Effect: EffectExec, Kind: "execute", Title: "Add dependency"}, addDependency)

// EditModuleConfig is the edit_module_config tool.
var EditModuleConfig = New(Spec{Name: "edit_module_config", Description: editModuleConfigDoc, Effect: EffectExec, Kind: "execute", Title: "Edit module config"}, editModuleConfig)

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
	return execTool(ctx, env, "path", dir, argv, nil, "", orDefault(in.TimeoutSeconds, depTimeout), 0)
}

func editModuleConfig(ctx context.Context, env *Env, in editModuleConfigIn) Result {
	need := func(field, value string, re *regexp.Regexp, what string) *Result {
		if value == "" {
			r := Errorf("field %s is required for action %q", field, in.Action)
			return &r
		}
		if re != nil && !re.MatchString(value) {
			r := Errorf("field %s: %q is not %s", field, value, what)
			return &r
		}
		return nil
	}
	var argv []string
	var bad *Result
	switch in.Ecosystem + "/" + in.Action {
	case "go/require":
		if bad = need("module", in.Module, goModulePath, "a Go module path"); bad == nil {
			if bad = need("version", in.Version, goVersion, "a Go version like v1.2.3"); bad == nil {
				argv = []string{"go", "mod", "edit", "-require=" + in.Module + "@" + in.Version}
			}
		}
	case "go/droprequire":
		if bad = need("module", in.Module, goModulePath, "a Go module path"); bad == nil {
			argv = []string{"go", "mod", "edit", "-droprequire=" + in.Module}
		}
	case "go/replace":
		if bad = need("module", in.Module, goModulePath, "a Go module path"); bad == nil {
			if bad = need("replacement", in.Replacement, nil, ""); bad == nil {
				if strings.HasPrefix(in.Replacement, "-") || strings.ContainsAny(in.Replacement, "=\x00\n") {
					r := Errorf("field replacement: %q is not a directory or module@version", in.Replacement)
					bad = &r
				} else {
					argv = []string{"go", "mod", "edit", "-replace=" + in.Module + "=" + in.Replacement}
				}
			}
		}
	case "go/dropreplace":
		if bad = need("module", in.Module, goModulePath, "a Go module path"); bad == nil {
			argv = []string{"go", "mod", "edit", "-dropreplace=" + in.Module}
		}
	case "go/go_version":
		if bad = need("version", in.Version, goLangVer, "a Go language version like 1.23"); bad == nil {
			argv = []string{"go", "mod", "edit", "-go=" + in.Version}
		}
	case "go/tidy":
		argv = []string{"go", "mod", "tidy"}
	case "npm/remove":
		if bad = need("module", in.Module, npmName, "an npm package name"); bad == nil {
			argv = []string{"npm", "uninstall", "--no-fund", "--no-audit", in.Module}
		}
	case "npm/set":
		if bad = need("key", in.Key, npmKey, "a package.json key path like scripts.test"); bad == nil {
			if strings.ContainsRune(in.Value, 0) {
				r := Errorf("field value contains a NUL byte")
				bad = &r
			} else {
				argv = []string{"npm", "pkg", "set", in.Key + "=" + in.Value}
			}
		}
	case "npm/delete":
		if bad = need("key", in.Key, npmKey, "a package.json key path like scripts.test"); bad == nil {
			argv = []string{"npm", "pkg", "delete", in.Key}
		}
	default:
		return Errorf("field action: %q is not an action for %s (Go: require, droprequire, replace, dropreplace, go_version, tidy; npm: remove, set, delete)", in.Action, in.Ecosystem)
	}
	if bad != nil {
		return *bad
	}
	dir, bad := moduleDir(env, in.Path, in.Ecosystem)
	if bad != nil {
		return *bad
	}
	return execTool(ctx, env, "path", dir, argv, nil, "", orDefault(in.TimeoutSeconds, depTimeout), 0)
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
