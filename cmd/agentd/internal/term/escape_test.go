package term

import (
	"strings"
	"testing"
)

// The attacker's strings: each must reach the terminal with nothing it could act on.
func TestSafeLineNeutralizesTerminalControls(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// ESC[8m turns on "concealed": what follows would be invisible in the prompt.
		{"echo hi\x1b[8m; touch ~/pwned", `echo hi\x1b[8m; touch ~/pwned`},
		// A newline in a title fakes a second line (say, a harmless-looking command).
		{"Read a.txt\n    $ ls", `Read a.txt\n    $ ls`},
		{"a\rb", `a\rb`},
		{"tab\there", `tab\there`},
		{"bell\x07 del\x7f nul\x00", `bell\x07 del\x7f nul\x00`},
		// C1 controls: U+009B is a one-character CSI on terminals that honour C1.
		{"x\u009b8my", `x\u009b8my`},
		{"next\u0085line", `next\u0085line`},
		// Bidi overrides and isolates reorder what is shown: "evil‮txt.exe" displays as evilexe.txt.
		{"evil\u202etxt.exe", `evil\u202etxt.exe`},
		{"\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069", `\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069`},
		{"a\u2028b\u2029c", `a\u2028b\u2029c`},
		// A raw 0x9b byte is CSI to an 8-bit terminal; invalid UTF-8 is shown as bytes.
		{"a\x9b8mb", `a\x9b8mb`},
		// Ordinary text, including non-ASCII and backslashes, is untouched.
		{`stats.go: Mean(1, 2, 3) ≈ 1.67 — naïve 日本 C:\path`, `stats.go: Mean(1, 2, 3) ≈ 1.67 — naïve 日本 C:\path`},
	} {
		if got := safeLine(tc.in); got != tc.want {
			t.Errorf("safeLine(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSafeTextKeepsLinesAndTabs(t *testing.T) {
	in := "line one\n\tindented\x1b[2J\u202e\nend\r"
	want := "line one\n\tindented\\x1b[2J\\u202e\nend\\r"
	if got := safeText(in); got != want {
		t.Fatalf("safeText = %q, want %q", got, want)
	}
}

func TestQuoteArgv(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"go", "test", "./..."}, "go test ./..."},
		// `a b` as one word and `a` `b` as two must look different.
		{[]string{"echo", "a b"}, "echo 'a b'"},
		{[]string{"echo", "a", "b"}, "echo a b"},
		{[]string{"echo", ""}, "echo ''"},
		{[]string{"sh", "-c", "it's"}, `sh -c 'it'\''s'`},
		{[]string{"sh", "-c", "echo $HOME; ls *"}, `sh -c 'echo $HOME; ls *'`},
		// Controls are shown as ANSI-C escapes that a shell would read back as the same bytes.
		{[]string{"sh", "-c", "echo hi\x1b[8m; touch ~/pwned"}, `sh -c $'echo hi\x1b[8m; touch ~/pwned'`},
		{[]string{"printf", "a\nb"}, `printf $'a\nb'`},
		{[]string{"cat", "evil\u202etxt.exe"}, `cat $'evil\u202etxt.exe'`},
		{[]string{"echo", "it's\tx"}, `echo $'it\'s\tx'`},
		{[]string{"echo", `back\slash` + "\x01"}, `echo $'back\\slash\x01'`},
	} {
		got := quoteArgv(tc.argv)
		if got != tc.want {
			t.Errorf("quoteArgv(%q) = %s, want %s", tc.argv, got, tc.want)
		}
		if safeLine(got) != got {
			t.Errorf("quoteArgv(%q) = %q is not safe to print", tc.argv, got)
		}
	}
}

// FuzzSafeLine: whatever comes in, nothing a terminal acts on comes out.
func FuzzSafeLine(f *testing.F) {
	f.Add("echo hi\x1b[8m; touch x")
	f.Add("evil\u202etxt")
	f.Add("\xff\x9b\u0085")
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{safeLine(s), quoteArgv([]string{s})} {
			for _, r := range out {
				if r < 0x20 || (r >= 0x7f && r <= 0x9f) || isBidiControl(r) || r == '\u2028' || r == '\u2029' || r == 0xFFFD && !strings.ContainsRune(s, 0xFFFD) {
					t.Fatalf("%q → %q holds %U", s, out, r)
				}
			}
		}
	})
}
