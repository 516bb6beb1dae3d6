package workspace

import (
	"strings"
	"testing"
)

func checkEdits(t *testing.T, oldText, newText string) []ByteEdit {
	t.Helper()
	edits := ComputeEdits(oldText, newText)
	got, err := ApplyEdits(oldText, edits)
	if err != nil {
		t.Fatalf("ApplyEdits(%q, %v): %v", oldText, edits, err)
	}
	if got != newText {
		t.Fatalf("ComputeEdits(%q, %q) = %v; applying gives %q", oldText, newText, edits, got)
	}
	x := NewLineIndex(oldText)
	last := -1
	for _, e := range edits {
		if e.Start <= last && last >= 0 && e.Start < last {
			t.Fatalf("edits overlap or are out of order: %v", edits)
		}
		last = e.End
		for _, off := range []int{e.Start, e.End} {
			for _, enc := range []PositionEncoding{UTF8, UTF16, UTF32} {
				if _, err := x.Position(off, enc); err != nil {
					t.Fatalf("edit %v of %q has no %s position: %v", e, oldText, enc, err)
				}
			}
		}
	}
	return edits
}

func TestComputeEditsMinimal(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           []ByteEdit
	}{
		{"same", "abc", "abc", nil},
		{"insert", "ac", "abc", []ByteEdit{{1, 1, "b"}}},
		{"delete", "abc", "ac", []ByteEdit{{1, 2, ""}}},
		{"from empty", "", "x\n", []ByteEdit{{0, 0, "x\n"}}},
		{"to empty", "x\n", "", []ByteEdit{{0, 2, ""}}},
		// é (C3 A9) → è (C3 A8): the shared lead byte must not be split off.
		{"no split rune", "caf\u00e9", "caf\u00e8", []ByteEdit{{3, 5, "\u00e8"}}},
		// Emoji sharing their first three bytes.
		{"emoji", "x😀y", "x😁y", []ByteEdit{{1, 5, "😁"}}},
		// CRLF → LF: deleting just the "\r" would end between \r and \n, which no LSP position
		// can name; the edit replaces the whole line break instead.
		{"crlf to lf", "a\r\nb", "a\nb", []ByteEdit{{1, 3, "\n"}}},
		{"lf to crlf", "a\nb", "a\r\nb", []ByteEdit{{1, 1, "\r"}}},
		{"append after crlf", "a\r\n", "a\r\nb\r\n", []ByteEdit{{3, 3, "b\r\n"}}},
		{"combining mark", "e\u0301", "e\u0300", []ByteEdit{{1, 3, "\u0300"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := checkEdits(t, c.old, c.new)
			if len(got) != len(c.want) {
				t.Fatalf("edits = %v, want %v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("edits = %v, want %v", got, c.want)
				}
			}
		})
	}
}

func TestComputeEditsSeparateHunks(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, strings.Repeat("line ", 3)+string(rune('a'+i%26))+"\n")
	}
	old := strings.Join(lines, "")
	changed := append([]string(nil), lines...)
	changed[10] = "CHANGED ten\n"
	changed[150] = "CHANGED 150\n"
	changed = append(changed[:100], append([]string{"inserted\n"}, changed[100:]...)...)
	edits := checkEdits(t, old, strings.Join(changed, ""))
	if len(edits) != 3 {
		t.Fatalf("got %d edits, want 3 separate ones: %v", len(edits), edits)
	}
	total := 0
	for _, e := range edits {
		total += e.End - e.Start
	}
	if total > 60 {
		t.Errorf("edits replace %d bytes, want a few dozen at most: %v", total, edits)
	}
}

func TestApplyEditsRefusesOverlap(t *testing.T) {
	if _, err := ApplyEdits("abcdef", []ByteEdit{{0, 3, "x"}, {2, 4, "y"}}); err == nil {
		t.Error("overlapping edits accepted")
	}
	if _, err := ApplyEdits("abc", []ByteEdit{{2, 9, "x"}}); err == nil {
		t.Error("edit past the end accepted")
	}
}

func FuzzComputeEdits(f *testing.F) {
	f.Add("a\r\nb\nc", "a\nb\r\nc")
	f.Add("😀漢\n字e\u0301\n", "😁漢\n字\ne\u0300\n")
	f.Add("x\xff\ny\n", "x\xfe\ny\nz\n")
	f.Add("one\ntwo\nthree\nfour\n", "one\n2\nthree\nfour\nfive\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		checkEdits(t, a, b)
	})
}

// benchFile is a 2,000-line Go-like file with emoji and CJK comments.
func benchFile() string {
	var b strings.Builder
	for i := range 2000 {
		if i%10 == 0 {
			b.WriteString("\t// 注释 😀 line\r\n")
		} else {
			b.WriteString("\tx := compute(a, b, c) + offset // plain\r\n")
		}
	}
	return b.String()
}

func BenchmarkComputeEdits(b *testing.B) {
	old := benchFile()
	lines := strings.SplitAfter(old, "\r\n")
	lines[100] = "\tchanged := 1\r\n"
	lines[1500] = "\t// 新 🎉\r\n"
	lines = append(lines[:900], append([]string{"\tinserted()\r\n"}, lines[900:]...)...)
	changed := strings.Join(lines, "")
	b.SetBytes(int64(len(old)))
	b.ReportAllocs()
	for b.Loop() {
		if len(ComputeEdits(old, changed)) != 3 {
			b.Fatal("want 3 edits")
		}
	}
}

func BenchmarkPositionUTF16(b *testing.B) {
	text := benchFile()
	x := NewLineIndex(text)
	off := len(text) - 20
	b.ReportAllocs()
	for b.Loop() {
		if _, err := x.Position(off, UTF16); err != nil {
			b.Fatal(err)
		}
	}
}

func TestComputeEditsFallsBackToOneReplacement(t *testing.T) {
	var a, b strings.Builder
	for i := range maxDiffD {
		a.WriteString("old " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + "\n")
		b.WriteString("new " + strings.Repeat("y", i%5) + string(rune('a'+i%26)) + "\n")
	}
	edits := checkEdits(t, a.String(), b.String())
	if len(edits) != 1 {
		t.Errorf("got %d edits for a rewrite past maxDiffD, want one replacement", len(edits))
	}
}
