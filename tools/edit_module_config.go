package tools

import (
	"context"
	"fmt"
	"regexp"
	"strings"
)

type editModuleConfigIn struct {
	Ecosystem      string `json:"ecosystem" schema:"enum=go,enum=npm"`
	Action         string `json:"action" schema:"enum=require,enum=droprequire,enum=replace,enum=dropreplace,enum=go_version,enum=tidy,enum=remove,enum=set,enum=delete"`
	Module         string `json:"module,omitempty" schema:"maxLength=300"`
	Version        string `json:"version,omitempty" schema:"maxLength=100"`
	Replacement    string `json:"replacement,omitempty" schema:"maxLength=1000"`
	Key            string `json:"key,omitempty" schema:"maxLength=300"`
	Value          string `json:"value,omitempty" schema:"maxLength=10000"`
	Path           string `json:"path,omitempty" schema:"maxLength=4096"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" schema:"minimum=1,maximum=3600"`
}

func (in editModuleConfigIn) title() string {
	if in.Action == "" {
		return ""
	}
	return strings.TrimSpace(fmt.Sprintf("Module config: %s %s", in.Action, in.Module))
}

// EditModuleConfig is the edit_module_config tool.
var EditModuleConfig Tool = &typed[editModuleConfigIn]{spec: Spec{Name: "edit_module_config", Effect: EffectExec, Kind: "execute", Title: "Edit module config"}, run: editModuleConfig}

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
	// Editing the manifest needs only the module's directory: that runs in the sandbox. Tidying
	// and npm's uninstall download and may run scripts, as add_dependency does.
	var box sandboxChoice
	switch in.Ecosystem + "/" + in.Action {
	case "go/tidy", "npm/remove":
		box, bad = outsideSandbox(env, "edit_module_config", depOutside[in.Ecosystem])
	default:
		box, bad = chooseSandbox(env, nil, "")
	}
	if bad != nil {
		return *bad
	}
	return execTool(ctx, env, "path", dir, argv, nil, "", orDefault(in.TimeoutSeconds, depTimeout), 0, box)
}
