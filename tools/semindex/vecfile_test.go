package semindex

import (
	"context"
	"fmt"
	"hash/fnv"
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

// vecOf is the one vector file beside the index file.
func vecOf(t *testing.T, file string) string {
	t.Helper()
	m, _ := filepath.Glob(file + ".vec-*")
	if len(m) != 1 {
		t.Fatalf("vector files %v, want one", m)
	}
	return m[0]
}

// A hit's score is the float cosine to float16's precision. A vector file that is missing, not
// this index's (another id in its header) or cut short is never read as this index's: the
// first two make the index start over (its vectors are gone: every file is embedded again),
// the third loses the rows past its end (those chunks are not found until embedded again);
// nothing fails and no score comes from another file's row. A file cut short drops the files
// whose rows it lost, which the next build embeds again.
func TestVectorFileLostOrForeign(t *testing.T) {
	root, file, rec := threeFiles(t)
	ix := Open(root, file, rec.embed)
	build(t, ix)
	exact := func(path, query string) float32 {
		text, _ := os.ReadFile(filepath.Join(root, path))
		a, b := rec.vec("File: "+path+"\n"+string(text)), rec.vec(query)
		normalize(a)
		normalize(b)
		return dotF(a, b)
	}
	h := searchOK(t, Open(root, file, rec.embed), "database schema", "db.go")
	if d := math.Abs(float64(h.Score - exact("db.go", "database schema"))); d > 1e-3 {
		t.Fatalf("score %v, exact %v: not the float16 row's", h.Score, exact("db.go", "database schema"))
	}
	for name, spoil := range map[string]func(vec string){
		"missing": func(vec string) { os.Remove(vec) },
		"foreign": func(vec string) {
			data, _ := os.ReadFile(vec)
			data[20] ^= 0xff // another id
			os.WriteFile(vec, data, 0o600)
		},
	} {
		t.Run(name, func(t *testing.T) {
			build(t, Open(root, file, rec.embed))
			spoil(vecOf(t, file))
			rec.calls = nil
			ix := Open(root, file, rec.embed)
			if n, _, _ := ix.Stats(); n != 0 {
				t.Fatalf("%d files held without their vectors", n)
			}
			build(t, ix)
			if got := len(rec.embeddedFiles()); got != 3 {
				t.Fatalf("embedded %d files again, want 3", got)
			}
			searchOK(t, Open(root, file, rec.embed), "database schema", "db.go")
			vecOf(t, file) // the lost or foreign one is gone, one of this index's is there
		})
	}
	t.Run("short", func(t *testing.T) {
		build(t, Open(root, file, rec.embed))
		vec := vecOf(t, file)
		os.Truncate(vec, vecHeader+10)
		rec.calls = nil
		ix := Open(root, file, rec.embed)
		if n, _, _ := ix.Stats(); n != 0 {
			t.Fatalf("%d files kept whose rows are past the end", n)
		}
		build(t, ix)
		if got := len(rec.embeddedFiles()); got != 3 {
			t.Fatalf("embedded %d files again, want 3", got)
		}
		searchOK(t, Open(root, file, rec.embed), "database schema", "db.go")
	})
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
	size := func() int64 { st, _ := os.Stat(vecOf(t, file)); return st.Size() }
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

// denseEmbed embeds each text as a realistic_test.go row picked by the text's hash: dense,
// embedding-like vectors, so an index of more than rerankMin chunks is searched through its
// binary codes.
func denseEmbed(dim int) Embed {
	g := newRealistic(dim, 4000)
	return func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			h := fnv.New64a()
			h.Write([]byte(t))
			out[i] = make([]float32, dim)
			g.vector(h.Sum64(), out[i])
		}
		return out, nil
	}
}

// An index built in many batches is recentred as it grows (the rows double several times), and
// every chunk's code stays one made against the centre the query is coded with: each of 1,500
// files, searched by its own text through the Hamming pass, comes first with a score of 1.
// Reopened from its files, the same.
func TestRecentredCodesFindEveryChunk(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 1500 {
		files[fmt.Sprintf("d%02d/f%04d.go", i/100, i)] = fmt.Sprintf("package p\n// file %d\n", i)
	}
	write(t, root, files)
	file := filepath.Join(t.TempDir(), "index.bin")
	embed := denseEmbed(256)
	ix := Open(root, file, embed)
	build(t, ix)
	if ix.cen.rows <= embedBatch || 2*ix.cen.rows < ix.rows {
		t.Fatalf("centre set at %d rows of %d: not recentred as it grew", ix.cen.rows, ix.rows)
	}
	for _, x := range []*Index{ix, Open(root, file, embed)} {
		for i := 0; i < 1500; i += 37 {
			name := fmt.Sprintf("d%02d/f%04d.go", i/100, i)
			h := searchOK(t, x, "File: "+name+"\n"+files[name], name)
			if h.Score < 0.999 {
				t.Fatalf("%s: score %v", name, h.Score)
			}
		}
	}
}

// A model whose vectors change size (a provider now answering with another dimension) makes
// the index start over at the new size: the build succeeds and the search works, rather than
// every build failing from then on.
func TestDimensionChangeStartsOver(t *testing.T) {
	root, file, rec := threeFiles(t)
	build(t, Open(root, file, rec.embed))
	rec2 := &recorder{vec: bagOfWords(64)}
	ix := Open(root, file, rec2.embed)
	write(t, root, map[string]string{"db.go": "package db\n// Migrate applies the schema migrations to the database tables, again.\n"})
	build(t, ix)
	// Only the changed file was embedded at the new size; the others come back at the next build.
	if n, _, _ := ix.Stats(); n != 1 {
		t.Fatalf("%d files after the size changed", n)
	}
	searchOK(t, ix, "database schema", "db.go")
	build(t, ix)
	if n, _, _ := ix.Stats(); n != 3 {
		t.Fatalf("%d files after the next build", n)
	}
	searchOK(t, Open(root, file, rec2.embed), "password login session", "auth.go")
}
