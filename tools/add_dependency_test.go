package tools

import (
	"strings"
	"testing"
)

func TestAddDependencyCommands(t *testing.T) {
	h := newHarness(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "web/package.json": `{"name":"web"}`, "web/src/x.ts": ""})
	h.deny = true // record the exact command without running it
	cases := []struct {
		tool string
		args map[string]any
		cmd  string
		cwd  string
	}{
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "github.com/a/b", "version": "v1.2.3"}, "go get github.com/a/b@v1.2.3", ""},
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "github.com/a/b"}, "go get github.com/a/b", ""},
		{"add_dependency", map[string]any{"ecosystem": "npm", "package": "@scope/pkg", "version": "^4.1.0", "dev": true, "path": "web/src"}, "npm install --save-dev --no-fund --no-audit @scope/pkg@^4.1.0", "web"},
		{"add_dependency", map[string]any{"ecosystem": "npm", "package": "lodash", "path": "web"}, "npm install --save --no-fund --no-audit lodash", "web"},
		{"edit_module_config", map[string]any{"ecosystem": "go", "action": "require", "module": "example.com/x", "version": "v0.1.0"}, "go mod edit -require=example.com/x@v0.1.0", ""},
		{"edit_module_config", map[string]any{"ecosystem": "go", "action": "replace", "module": "example.com/x", "replacement": "../x"}, "go mod edit -replace=example.com/x=../x", ""},
		{"edit_module_config", map[string]any{"ecosystem": "go", "action": "tidy"}, "go mod tidy", ""},
		{"edit_module_config", map[string]any{"ecosystem": "npm", "action": "set", "key": "scripts.test", "value": "vitest run", "path": "web"}, "npm pkg set scripts.test=vitest run", "web"},
		{"edit_module_config", map[string]any{"ecosystem": "npm", "action": "remove", "module": "lodash", "path": "web"}, "npm uninstall --no-fund --no-audit lodash", "web"},
	}
	for i, c := range cases {
		mustErr(t, h.run(c.tool, c.args), "permission denied")
		got := h.asked[i]
		if strings.Join(got.Command, " ") != c.cmd || got.Cwd != h.path(c.cwd) || got.Kind != "execute" {
			t.Errorf("%v: asked %q in %s, want %q in %s", c.args, got.Command, got.Cwd, c.cmd, h.path(c.cwd))
		}
	}
}

func TestAddDependencyRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"go.mod": "module m\n", "empty/x": ""})
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "-modfile=/etc/passwd"}, "field package"},
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "github.com/a/b", "version": "--x"}, "field version"},
		{"add_dependency", map[string]any{"ecosystem": "npm", "package": "https://evil.example/x.tgz"}, "field package"},
		{"add_dependency", map[string]any{"ecosystem": "npm", "package": "left-pad", "path": "empty"}, "no package.json"},
		{"add_dependency", map[string]any{"ecosystem": "pip", "package": "x"}, "field ecosystem must be one of"},
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "x", "dev": true}, "field dev"},
		{"add_dependency", map[string]any{"ecosystem": "go", "package": "github.com/a/b", "path": "../.."}, "outside"},
	} {
		mustErr(t, h.run(c.tool, c.args), c.want)
	}
	if len(h.asked) != 0 {
		t.Fatalf("refused calls asked for permission: %+v", h.asked)
	}
}
