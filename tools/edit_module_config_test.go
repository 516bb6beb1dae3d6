package tools

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// End to end on a real go.mod: go mod edit needs no network.
func TestEditModuleConfigGo(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go is not on PATH")
	}
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	h := newHarness(t, map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "dep/go.mod": "module example.com/dep\n\ngo 1.22\n", "dep/dep.go": "package dep\n\nconst X = 1\n"})
	mustOK(t, h.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "require", "module": "example.com/dep", "version": "v0.0.0"}))
	mustOK(t, h.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "replace", "module": "example.com/dep", "replacement": "./dep"}))
	r := mustOK(t, h.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "go_version", "version": "1.23"}))
	mustContain(t, r.Output, "$ go mod edit -go=1.23", "[exit code 0")
	data, _ := os.ReadFile(h.path("go.mod"))
	mustContain(t, string(data), "require example.com/dep v0.0.0", "replace example.com/dep => ./dep", "go 1.23")
	mustOK(t, h.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "droprequire", "module": "example.com/dep"}))
	data, _ = os.ReadFile(h.path("go.mod"))
	if strings.Contains(string(data), "require example.com/dep") {
		t.Fatalf("droprequire left:\n%s", data)
	}
	// add_dependency through go get, resolved offline through the replace directive.
	r = mustOK(t, h.run("add_dependency", map[string]any{"ecosystem": "go", "package": "example.com/dep", "version": "v0.0.0"}))
	mustContain(t, r.Output, "$ go get example.com/dep@v0.0.0", "[exit code 0")
	data, _ = os.ReadFile(h.path("go.mod"))
	mustContain(t, string(data), "example.com/dep v0.0.0")
	mustOK(t, h.run("edit_module_config", map[string]any{"ecosystem": "go", "action": "dropreplace", "module": "example.com/dep"}))
	data, _ = os.ReadFile(h.path("go.mod"))
	if strings.Contains(string(data), "replace") {
		t.Fatalf("dropreplace left:\n%s", data)
	}
}

func TestEditModuleConfigRefusals(t *testing.T) {
	h := newHarness(t, map[string]string{"go.mod": "module m\n", "web/package.json": "{}"})
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"ecosystem": "go", "action": "require", "module": "example.com/x"}, "field version is required"},
		{map[string]any{"ecosystem": "go", "action": "require", "version": "v1.0.0"}, "field module is required"},
		{map[string]any{"ecosystem": "go", "action": "remove", "module": "x"}, "field action"},
		{map[string]any{"ecosystem": "npm", "action": "tidy"}, "field action"},
		{map[string]any{"ecosystem": "go", "action": "bogus"}, "field action must be one of"},
		{map[string]any{"ecosystem": "go", "action": "replace", "module": "example.com/x", "replacement": "-x"}, "field replacement"},
		{map[string]any{"ecosystem": "go", "action": "go_version", "version": "latest"}, "field version"},
		{map[string]any{"ecosystem": "npm", "action": "set", "key": "--global", "value": "x", "path": "web"}, "field key"},
		{map[string]any{"ecosystem": "npm", "action": "remove", "module": "../x", "path": "web"}, "field module"},
		{map[string]any{"ecosystem": "npm", "action": "delete", "key": "scripts.x"}, "no package.json"},
		{map[string]any{"action": "tidy"}, "missing required field ecosystem"},
	} {
		mustErr(t, h.run("edit_module_config", c.args), c.want)
	}
	if len(h.asked) != 0 {
		t.Fatalf("refused calls asked for permission: %+v", h.asked)
	}
}
