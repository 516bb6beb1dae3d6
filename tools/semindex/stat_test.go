package semindex

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// countReads makes the index's file reads counted, by path, for the test's length.
func countReads(t *testing.T) func() map[string]int {
	t.Helper()
	var mu sync.Mutex
	reads := map[string]int{}
	orig := readFile
	readFile = func(dir, name string, max int64) ([]byte, error) {
		mu.Lock()
		reads[filepath.ToSlash(name)]++
		mu.Unlock()
		return orig(dir, name, max)
	}
	t.Cleanup(func() { readFile = orig })
	return func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := reads
		reads = map[string]int{}
		return out
	}
}

// age sets the files' modification time to at, so that they are older than the racy margin.
func age(t *testing.T, root string, at time.Time, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.Chtimes(filepath.Join(root, n), at, at); err != nil {
			t.Fatal(err)
		}
	}
}

func build(t *testing.T, ix *Index) Progress {
	t.Helper()
	var last Progress
	if err := ix.Build(context.Background(), func(p Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	return last
}

// An index reopened on an unchanged tree (a new session) reads no file and rewrites nothing;
// a file changed to the same size is read and embedded again.
func TestRebuildReadsOnlyFilesWhoseStatChanged(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a\n// alpha apples\n", "b.go": "package b\n// bravo bears\n", "c/d.go": "package d\n"})
	hour := time.Now().Add(-time.Hour)
	age(t, root, hour, "a.go", "b.go", "c/d.go")
	file := filepath.Join(t.TempDir(), "index.bin")
	rec := &recorder{vec: bagOfWords(32)}
	reads := countReads(t)
	build(t, Open(root, file, rec.embed))
	if n := len(reads()); n != 3 {
		t.Fatalf("the first build read %d files, want 3", n)
	}
	saved, _ := os.Stat(file)

	ix := Open(root, file, rec.embed)
	p := build(t, ix)
	if r := reads(); len(r) != 0 {
		t.Fatalf("an unchanged tree was read: %v", r)
	}
	if p.Embedded != 0 || p.Done != 3 || p.Total != 3 {
		t.Fatalf("progress %+v", p)
	}
	if now, _ := os.Stat(file); !now.ModTime().Equal(saved.ModTime()) || now.Size() != saved.Size() {
		t.Fatal("an unchanged build rewrote the index file")
	}

	// Same size, other content, another (old) modification time.
	write(t, root, map[string]string{"b.go": "package b\n// brave bulls\n"})
	age(t, root, hour.Add(time.Second), "b.go")
	rec.calls = nil
	p = build(t, Open(root, file, rec.embed))
	if r := reads(); len(r) != 1 || r["b.go"] != 1 {
		t.Fatalf("reads after one file changed: %v, want b.go alone", r)
	}
	if got := rec.embeddedFiles(); p.Embedded != 1 || len(got) != 1 || got[0] != "b.go" {
		t.Fatalf("embedded %v (%d), want b.go", got, p.Embedded)
	}
	hits, err := Open(root, file, rec.embed).Search(context.Background(), "brave bulls", 1)
	if err != nil || len(hits) != 1 || hits[0].Path != "b.go" {
		t.Fatalf("hits %v, %v", hits, err)
	}
}

// A file's stat does not hide a change when the file could have changed again within the file
// system's time granularity after it was read ("racy git"): a file modified at or after the
// build's start less the margin is read again next time, even though its stat is the same.
func TestRacilyCleanFileIsReadAgain(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a\n// alpha\n", "old.go": "package old\n"})
	age(t, root, time.Now().Add(-time.Hour), "old.go")
	file := filepath.Join(t.TempDir(), "index.bin")
	rec := &recorder{vec: bagOfWords(32)}
	reads := countReads(t)
	build(t, Open(root, file, rec.embed)) // a.go was written just now: racy
	reads()
	build(t, Open(root, file, rec.embed))
	if r := reads(); len(r) != 1 || r["a.go"] != 1 {
		t.Fatalf("reads %v, want a.go again and old.go not", r)
	}
	// Once its time is older than a build's start, its stat is stored and trusted.
	age(t, root, time.Now().Add(-time.Minute), "a.go")
	build(t, Open(root, file, rec.embed))
	reads()
	build(t, Open(root, file, rec.embed))
	if r := reads(); len(r) != 0 {
		t.Fatalf("reads %v, want none", r)
	}
}

// An index written by the version without stats keeps its vectors: its files are read once,
// not embedded again, and their stats stored.
func TestVersionOneIndexIsReadAndKept(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.go": "package a\n// alpha\n"})
	age(t, root, time.Now().Add(-time.Hour), "a.go")
	file := filepath.Join(t.TempDir(), "index.bin")
	rec := &recorder{vec: bagOfWords(32)}
	ix := Open(root, file, rec.embed)
	build(t, ix)
	ix.mu.RLock()
	v1 := encodeLegacy(asLegacy(ix), false)
	ix.mu.RUnlock()
	if err := os.WriteFile(file, v1, 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := load(file)
	if err != nil || len(l.files) != 1 || len(l.files["a.go"].chunks) == 0 || l.files["a.go"].chunks[0].code == nil {
		t.Fatalf("version 1 not read: %v, %v", l, err)
	}
	reads := countReads(t)
	rec.calls = nil
	p := build(t, Open(root, file, rec.embed))
	if r := reads(); r["a.go"] != 1 || p.Embedded != 0 || len(rec.calls) != 0 {
		t.Fatalf("reads %v, embedded %d, calls %d: want one read and no embedding", r, p.Embedded, len(rec.calls))
	}
	build(t, Open(root, file, rec.embed))
	if r := reads(); len(r) != 0 {
		t.Fatalf("the stat was not stored: reads %v", r)
	}
}

// An index of format 2 (float32 vectors) is read without reading or embedding any file: its
// vectors are quantized as it loads, they rank as the floats did, and the next save writes
// format 3, a quarter of the size.
func TestVersionTwoIndexIsQuantizedAndKept(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"auth.go": "package auth\n// Login checks the password and issues a session token.\n",
		"db.go":   "package db\n// Migrate applies the schema migrations to the database tables.\n",
		"ui.ts":   "export function renderButton() { /* draws a button widget */ }\n",
	})
	age(t, root, time.Now().Add(-time.Hour), "auth.go", "db.go", "ui.ts")
	file := filepath.Join(t.TempDir(), "index.bin")
	rec := &recorder{vec: bagOfWords(256)}
	// The float vectors exactly as format 2 held them: the model's, normalized.
	var legacy []legacyFile
	ix := Open(root, "", rec.embed)
	build(t, ix)
	ix.mu.RLock()
	for p, f := range ix.files {
		text, _ := os.ReadFile(filepath.Join(root, p))
		lf := legacyFile{path: p, hash: f.hash, stat: f.stat}
		for _, sp := range Chunks(string(text)) {
			v := rec.vec("File: " + p + "\n" + sp.Text)
			normalize(v)
			lf.chunks = append(lf.chunks, legacyChunk{sp.Start, sp.End, v})
		}
		legacy = append(legacy, lf)
	}
	ix.mu.RUnlock()
	v2 := encodeLegacy(legacy, true)
	if err := os.WriteFile(file, v2, 0o600); err != nil {
		t.Fatal(err)
	}
	reads := countReads(t)
	rec.calls = nil
	ix = Open(root, file, rec.embed)
	for q, want := range map[string]string{"password login session": "auth.go", "database schema": "db.go", "button widget": "ui.ts"} {
		hits, err := ix.Search(context.Background(), q, 3)
		if err != nil || hits[0].Path != want {
			t.Fatalf("%q in the format 2 index: %+v %v", q, hits, err)
		}
	}
	rec.calls = nil
	build(t, ix)
	if r := reads(); len(r) != 0 || len(rec.calls) != 0 {
		t.Fatalf("a format 2 index with good stats: reads %v, %d embedding calls", r, len(rec.calls))
	}
	// The build saved it once in format 3, which names the vector file its floats went to.
	data, _ := os.ReadFile(file)
	if vecs, _ := filepath.Glob(file + ".vec-*"); !bytes.HasPrefix(data, magic) || len(vecs) != 1 {
		t.Fatalf("saved %q…, vector files %v", data[:len(magic)], vecs)
	}
	hits, err := Open(root, file, rec.embed).Search(context.Background(), "database schema", 1)
	if err != nil || hits[0].Path != "db.go" {
		t.Fatalf("the saved index: %+v %v", hits, err)
	}
	if r := reads(); len(r) != 0 {
		t.Fatalf("reads %v", r)
	}
}
