package glob

import "testing"

func TestMatch(t *testing.T) {
	cases := []struct {
		pat, path string
		want      bool
	}{
		{"*.go", "main.go", true},
		{"*.go", "a/b/main.go", true},
		{"*.go", "main.gox", false},
		{"*_test.go", "x/y_test.go", true},
		{"src/*.ts", "src/a.ts", true},
		{"src/*.ts", "src/b/a.ts", false},
		{"src/**/*.ts", "src/b/c/a.ts", true},
		{"src/**/*.ts", "src/a.ts", true},
		{"**/gen/**", "a/gen/b/c.go", true},
		{"vendor/", "vendor/x/y.go", true},
		{"vendor", "a/vendor", true},
		{"*.{ts,tsx}", "a/b.tsx", true},
		{"*.{ts,tsx}", "a/b.js", false},
		{"file?.txt", "file1.txt", true},
		{"[ab].c", "b.c", true},
		{"[!ab].c", "b.c", false},
		{"/abs/dir/**", "/abs/dir/x/y", true},
		{"/abs/dir/*", "/abs/dir/x", true},
		{"/abs/dir/*", "/abs/other/x", false},
	}
	for _, c := range cases {
		g, err := Compile(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if got := g.Match(c.path); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
}
