package semindex

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// bagOfWords is a deterministic embedding: each word adds 1 to a bucket of its hash. Texts that
// share words point the same way, which is all a search test needs.
func bagOfWords(dim int) func(string) []float32 {
	return func(text string) []float32 {
		v := make([]float32, dim)
		for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
			if len(w) < 3 || w == "file" {
				continue
			}
			h := fnv.New32a()
			h.Write([]byte(w))
			v[h.Sum32()%uint32(dim)]++
		}
		return v
	}
}

// recorder is an Embed that records the texts of each call.
type recorder struct {
	mu    sync.Mutex
	calls [][]string
	vec   func(string) []float32
}

func (r *recorder) embed(ctx context.Context, texts []string) ([][]float32, error) {
	r.mu.Lock()
	r.calls = append(r.calls, append([]string(nil), texts...))
	r.mu.Unlock()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = r.vec(t)
	}
	return out, nil
}

func (r *recorder) embeddedFiles() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, c := range r.calls {
		for _, t := range c {
			if f, ok := strings.CutPrefix(t, "File: "); ok {
				f, _, _ = strings.Cut(f, "\n")
				if !seen[f] {
					seen[f] = true
					out = append(out, f)
				}
			}
		}
	}
	return out
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestChunksOverlap(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 130; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	got := Chunks(b.String())
	want := [][2]int{{1, 60}, {51, 110}, {101, 130}}
	if len(got) != len(want) {
		t.Fatalf("%d chunks: %+v", len(got), got)
	}
	for i, w := range want {
		if got[i].Start != w[0] || got[i].End != w[1] {
			t.Errorf("chunk %d = %d-%d, want %d-%d", i, got[i].Start, got[i].End, w[0], w[1])
		}
	}
	if !strings.HasPrefix(got[1].Text, "line 51\n") || !strings.HasSuffix(got[2].Text, "line 130\n") {
		t.Errorf("texts %q … %q", got[1].Text[:10], got[2].Text)
	}
	// A minified file: lines are cut by bytes too, and one huge line is clipped.
	long := strings.Repeat("x", 3000) + "\n" + strings.Repeat("y", 3000) + "\n" + strings.Repeat("z", 9000)
	for _, c := range Chunks(long) {
		if len(c.Text) > ChunkBytes {
			t.Errorf("chunk %d-%d is %d bytes", c.Start, c.End, len(c.Text))
		}
	}
	if n := len(Chunks("\n\n  \n")); n != 0 {
		t.Errorf("blank text gave %d chunks", n)
	}
}

func TestBuildSearchAndUpdateIncrementally(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		".gitignore":      "secret/\n*.log\n",
		"auth/login.go":   "package auth\n// Login checks the password and issues a session token.\nfunc Login(user, password string) (token string) { return }\n",
		"db/migrate.go":   "package db\n// Migrate applies the schema migrations to the database tables.\nfunc Migrate() {}\n",
		"ui/button.ts":    "export function renderButton(label: string) { /* draws a button widget */ }\n",
		"secret/keys.txt": "password token session login\n",
		"debug.log":       "password token session login\n",
		"bin/blob.dat":    "abc\x00def",
	})
	r := &recorder{vec: bagOfWords(64)}
	file := filepath.Join(t.TempDir(), "state", "index.bin")
	ix := Open(root, file, r.embed)
	var last Progress
	if err := ix.Build(context.Background(), func(p Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if !last.Finished || last.Done != last.Total || last.Embedded != 4 {
		t.Fatalf("progress %+v", last)
	}
	got := strings.Join(r.embeddedFiles(), ",")
	if got != ".gitignore,auth/login.go,db/migrate.go,ui/button.ts" {
		t.Fatalf("embedded %s: ignored, binary or missing files", got)
	}
	hits, err := ix.Search(context.Background(), "where is the password checked for login", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Path != "auth/login.go" || hits[0].Start != 1 || hits[0].End != 3 || hits[0].Score <= hits[1].Score {
		t.Fatalf("hits %+v", hits)
	}
	hits, _ = ix.Search(context.Background(), "database schema migrations", 1)
	if hits[0].Path != "db/migrate.go" {
		t.Fatalf("hits %+v", hits)
	}

	// One file changes, one goes, one comes: only the changed and the new one are embedded.
	r.calls = nil
	write(t, root, map[string]string{"ui/button.ts": "export function renderButton() { /* draws a checkbox widget */ }\n", "ui/menu.ts": "export const menu = 1 // the navigation menu\n"})
	os.Remove(filepath.Join(root, "db/migrate.go"))
	if err := ix.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.embeddedFiles(), ","); got != "ui/button.ts,ui/menu.ts" {
		t.Fatalf("second build embedded %s", got)
	}
	if files, _, _ := ix.Stats(); files != 4 {
		t.Fatalf("%d files after the update", files)
	}
	hits, _ = ix.Search(context.Background(), "database schema migrations", 5)
	for _, h := range hits {
		if h.Path == "db/migrate.go" {
			t.Fatal("a deleted file is still found")
		}
	}

	// The index persists: a new Index over the same file embeds nothing for unchanged files.
	r.calls = nil
	ix2 := Open(root, file, r.embed)
	if files, _, _ := ix2.Stats(); files != 4 {
		t.Fatalf("reloaded %d files", files)
	}
	if err := ix2.Build(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if got := r.embeddedFiles(); len(got) != 0 {
		t.Fatalf("reload embedded %v", got)
	}
	hits, _ = ix2.Search(context.Background(), "checkbox widget", 1)
	if hits[0].Path != "ui/button.ts" {
		t.Fatalf("hits %+v", hits)
	}
}

// TestSearchWhileBuilding: the index answers with what it has while the build goes on.
func TestSearchWhileBuilding(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 100 {
		// 100 files of one chunk each: two embedding calls of 64 and 36 chunks.
		files[fmt.Sprintf("f%03d.txt", i)] = "topic" + letters(i) + " alpha beta\n"
	}
	write(t, root, files)
	vec := bagOfWords(1024)
	release := make(chan struct{})
	firstDone := make(chan struct{})
	calls := 0
	embed := func(ctx context.Context, texts []string) ([][]float32, error) {
		if len(texts) > 1 {
			calls++
			if calls == 2 {
				close(firstDone)
				<-release
			}
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = vec(t)
		}
		return out, nil
	}
	ix := Open(root, filepath.Join(t.TempDir(), "i.bin"), embed)
	done := make(chan error)
	go func() { done <- ix.Build(context.Background(), nil) }()
	<-firstDone
	fs, _, pending := ix.Stats()
	if fs != 64 || pending != 36 {
		t.Fatalf("partial index: %d files, %d pending", fs, pending)
	}
	hits, err := ix.Search(context.Background(), "topic"+letters(10), 1)
	if err != nil || hits[0].Path != "f010.txt" {
		t.Fatalf("partial search: %+v %v", hits, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	hits, _ = ix.Search(context.Background(), "topic"+letters(90), 1)
	if hits[0].Path != "f090.txt" {
		t.Fatalf("after the build: %+v", hits)
	}
}

// TestBuildErrorKeepsWhatWasDone: an embedding failure ends the build, reports it, and keeps the
// files embedded before it (saved), so the next build resumes.
func TestBuildErrorKeepsWhatWasDone(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{}
	for i := range 100 {
		files[fmt.Sprintf("f%03d.txt", i)] = fmt.Sprintf("word%03d\n", i)
	}
	write(t, root, files)
	vec := bagOfWords(32)
	calls := 0
	embed := func(ctx context.Context, texts []string) ([][]float32, error) {
		calls++
		if calls == 2 {
			return nil, fmt.Errorf("rate limited")
		}
		out := make([][]float32, len(texts))
		for i, t := range texts {
			out[i] = vec(t)
		}
		return out, nil
	}
	file := filepath.Join(t.TempDir(), "i.bin")
	var last Progress
	err := Open(root, file, embed).Build(context.Background(), func(p Progress) { last = p })
	if err == nil || !last.Finished || last.Err == nil {
		t.Fatalf("err %v, progress %+v", err, last)
	}
	ix := Open(root, file, embed)
	if n, _, _ := ix.Stats(); n != 64 {
		t.Fatalf("saved %d files, want the 64 of the first batch", n)
	}
}

// letters spells i in letters, since bagOfWords reads only letters.
func letters(i int) string { return string(rune('a'+i/26)) + string(rune('a'+i%26)) }

func TestDecodeRefusesGarbage(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("nope"), append(append([]byte{}, magic...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01)} {
		if _, _, err := decode(b); err == nil {
			t.Errorf("decoded %q", b)
		}
	}
	h := header{vecID: [16]byte{1, 2, 3}, dim: 70, cen: centre{v: make([]float32, 70), sum: make([]float64, 70), n: 5, rows: 4}}
	h.cen.v[69], h.cen.sum[0] = 0.5, -2
	files := []namedEntry{{"a.go", &fileEntry{stat: fileStat{size: 9, mtime: -5, ino: 7, ctime: 11}, chunks: []chunk{{start: 1, end: 3, off: 99, code: []uint64{1 << 63, 5}}, {start: 4, end: 4}}}}}
	var b bytes.Buffer
	if err := encode(&b, h, files); err != nil {
		t.Fatal(err)
	}
	gh, got, err := decode(b.Bytes())
	if err != nil || len(got) != 1 {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	f := got["a.go"]
	if c := f.chunks[0]; c.code[0] != 1<<63 || c.code[1] != 5 || c.off != 99 || c.end != 3 || f.stat != files[0].f.stat || len(f.chunks) != 2 || f.chunks[1].code != nil {
		t.Fatalf("round trip: %+v", f)
	}
	if gh.vecID != h.vecID || gh.dim != 70 || gh.cen.n != 5 || gh.cen.rows != 4 || gh.cen.v[69] != 0.5 || gh.cen.sum[0] != -2 {
		t.Fatalf("header round trip: %+v", gh)
	}
}

// Issue 26 item 1: a file that is a link out of the root (committed as one, or swapped for one
// after the walk) is never read, so its target never reaches the embedding model; a link
// inside the root is indexed as the file it names.
func TestBuildNeverReadsThroughLinksOut(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"real.go": "package real\n// inside words here\n"})
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	if err := os.WriteFile(secret, []byte("TOPSECRET-EMBED password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"leak.go": secret, "env.go": "/proc/self/environ", "alias.go": "real.go"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("AGENTD_EMBED_PROBE", "ENVSECRET-EMBED")
	r := &recorder{vec: bagOfWords(64)}
	ix := Open(root, filepath.Join(t.TempDir(), "index.bin"), r.embed)
	if err := ix.Build(context.Background(), func(Progress) {}); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		for _, text := range c {
			if strings.Contains(text, "TOPSECRET-EMBED") || strings.Contains(text, "ENVSECRET-EMBED") || strings.Contains(text, "PATH=") {
				t.Fatalf("a link out of the root was embedded: %q", text)
			}
		}
	}
}
