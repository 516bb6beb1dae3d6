package mcp

import (
	"regexp"
	"strings"
	"testing"
)

// validToolName accepts exactly what the providers' rule ^[A-Za-z0-9_-]{1,64}$ accepts.
func TestValidToolName(t *testing.T) {
	rule := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	names := []string{"", "a", "read_file", "A-Z_09", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"has space", "dot.name", "slash/name", "ünïcode", "tab\t", "new\nline", "emoji🚀", "-", "_", "$"}
	for c := 0; c < 256; c++ {
		names = append(names, "x"+string(rune(c)), string([]byte{byte(c)}))
	}
	for _, n := range names {
		if got, want := validToolName(n), rule.MatchString(n); got != want {
			t.Errorf("validToolName(%q) = %v, want %v", n, got, want)
		}
	}
}
