package semindex

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// searchOK asserts that query finds want first.
func searchOK(t *testing.T, ix *Index, query, want string) Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), query, 3)
	if err != nil || len(hits) == 0 || hits[0].Path != want {
		t.Fatalf("%q: %+v %v, want %s first", query, hits, err, want)
	}
	return hits[0]
}

func threeFiles(t *testing.T) (root, file string, rec *recorder) {
	root = t.TempDir()
	write(t, root, map[string]string{
		"auth.go": "package auth\n// Login checks the password and issues a session token.\n",
		"db.go":   "package db\n// Migrate applies the schema migrations to the database tables.\n",
		"ui.ts":   "export function renderButton() { /* draws a button widget */ }\n",
	})
	age(t, root, time.Now().Add(-time.Hour), "auth.go", "db.go", "ui.ts")
	return root, filepath.Join(t.TempDir(), "state", "index.bin"), &recorder{vec: bagOfWords(128)}
}

// With the float16 rows a hit's score is the float cosine to float16's precision; a vector
// file that is missing, not this index's, or cut short leaves the index searchable by int8
// (nothing fails, nothing is read from the wrong rows), and the next embedding starts a new one.
func TestVectorFileLostOrForeignFallsBackToInt8(t *testing.T) {
	root, file, rec := threeFiles(t)
	ix := Open(root, file, rec.embed)
	build(t, ix)
	exact := func(path string) float32 {
		text, _ := os.ReadFile(filepath.Join(root, path))
		a, b := rec.vec("File: "+path+"\n"+string(text)), rec.vec("database schema")
		normalize(a)
		normalize(b)
		return dotF(a, b)
	}
	h := searchOK(t, Open(root, file, rec.embed), "database schema", "db.go")
	if d := math.Abs(float64(h.Score - exact("db.go"))); d > 1e-4 {
		t.Fatalf("score %v, exact %v: not the float16 row's", h.Score, exact("db.go"))
	}
	for name, spoil := range map[string]func(){
		"missing": func() { os.Remove(file + ".vec") },
		"foreign": func() {
			other, _ := createVecFile(file + ".vec")
			other.appendRows([][]float32{make([]float32, 128)})
			other.f.Close()
		},
		"short": func() { os.Truncate(file+".vec", vecHeader+10) },
	} {
		t.Run(name, func(t *testing.T) {
			build(t, Open(root, file, rec.embed)) // a good index and vector file again
			write(t, root, map[string]string{"db.go": "package db\n// Migrate applies the schema migrations to the database tables.\n"})
			spoil()
			ix := Open(root, file, rec.embed)
			h := searchOK(t, ix, "database schema", "db.go")
			if d := math.Abs(float64(h.Score - exact("db.go"))); d > 0.02 {
				t.Fatalf("int8 score %v, exact %v", h.Score, exact("db.go"))
			}
			// A new file is embedded into a vector file of this index's.
			write(t, root, map[string]string{"mail.go": "package mail\n// Send delivers the newsletter email to subscribers.\n"})
			build(t, ix)
			h = searchOK(t, Open(root, file, rec.embed), "newsletter email subscribers", "mail.go")
			if h.Score < 0.5 {
				t.Fatalf("score %v", h.Score)
			}
			os.Remove(filepath.Join(root, "mail.go"))
		})
	}
}

// Files embedded again leave dead rows; once they are most of the vector file a save rewrites
// it with the live rows, and every hit still reads its own row.
func TestVectorFileIsCompacted(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("f%02d.go", i)] = fmt.Sprintf("package p\n// topic%s alpha\n", letters(i))
	}
	write(t, root, files)
	file := filepath.Join(t.TempDir(), "index.bin")
	rec := &recorder{vec: bagOfWords(2048)} // 4 KB a row: 40 files, 160 KB a generation
	ix := Open(root, file, rec.embed)
	build(t, ix)
	size := func() int64 { st, _ := os.Stat(file + ".vec"); return st.Size() }
	first := size()
	for gen := range 12 {
		for i := range 40 {
			files[fmt.Sprintf("f%02d.go", i)] = fmt.Sprintf("package p\n// topic%s version%s\n", letters(i), letters(gen))
		}
		write(t, root, files)
		build(t, ix)
	}
	if s := size(); s > 2*first+(1<<20)+first {
		t.Fatalf("vector file %d bytes after 12 generations of %d: not compacted", s, first)
	}
	for i := range 40 {
		h := searchOK(t, Open(root, file, rec.embed), "topic"+letters(i)+" version"+letters(11), fmt.Sprintf("f%02d.go", i))
		// Three words in the file (package, topic…, version…), two of them in the query.
		if want := float32(2 / math.Sqrt(6)); math.Abs(float64(h.Score-want)) > 1e-3 {
			t.Fatalf("%d: score %v after compaction, want %v: a row not its own", i, h.Score, want)
		}
	}
}

// Update re-indexes the files it is given, without a walk: a changed file is embedded again,
// a deleted one dropped, one the index does not hold left to the next build (whose walk
// decides whether it belongs), and a path out of the root refused before anything is done.
func TestUpdateOneFile(t *testing.T) {
	root, file, rec := threeFiles(t)
	write(t, root, map[string]string{".gitignore": "secret.go\n"})
	age(t, root, time.Now().Add(-time.Hour), ".gitignore")
	ix := Open(root, file, rec.embed)
	build(t, ix)
	reads := countReads(t)
	write(t, root, map[string]string{"ui.ts": "export function renderCheckbox() { /* draws a checkbox toggle */ }\n", "secret.go": "package s // checkbox toggle\n"})
	age(t, root, time.Now().Add(-30*time.Minute), "ui.ts")
	os.Remove(filepath.Join(root, "auth.go"))
	rec.calls = nil
	// As at 100k files, a save is not due yet: the last one took long and was just now.
	ix.saveMu.Lock()
	ix.lastSave, ix.saveCost = time.Now(), time.Hour
	ix.saveMu.Unlock()
	if err := ix.Update(context.Background(), []string{"ui.ts", "auth.go", "secret.go", "db.go"}); err != nil {
		t.Fatal(err)
	}
	if r := reads(); len(r) != 1 || r["ui.ts"] != 1 {
		t.Fatalf("reads %v, want ui.ts alone (db.go's stat is unchanged)", r)
	}
	if got := rec.embeddedFiles(); len(got) != 1 || got[0] != "ui.ts" {
		t.Fatalf("embedded %v", got)
	}
	searchOK(t, ix, "checkbox toggle", "ui.ts")
	if n, _, _ := ix.Stats(); n != 3 { // .gitignore, db.go, ui.ts
		t.Fatalf("%d files after the update", n)
	}
	// Not saved: a new Index over the file reads the changed file again and finds it; after a
	// Save it reads nothing.
	reads()
	again := Open(root, file, rec.embed)
	build(t, again)
	searchOK(t, again, "checkbox toggle", "ui.ts")
	if r := reads(); r["ui.ts"] != 1 {
		t.Fatalf("reads %v, want ui.ts again", r)
	}
	if err := ix.Save(); err != nil {
		t.Fatal(err)
	}
	build(t, Open(root, file, rec.embed))
	if r := reads(); len(r) != 0 {
		t.Fatalf("after the save: reads %v", r)
	}
	for _, bad := range []string{"../outside.go", "/etc/passwd", "a/../../b"} {
		if err := ix.Update(context.Background(), []string{"db.go", bad}); err == nil || !strings.Contains(err.Error(), "not a path inside") {
			t.Errorf("Update(%q): %v", bad, err)
		}
	}
	if r := reads(); len(r) != 0 {
		t.Fatalf("a refused update read %v", r)
	}
}
