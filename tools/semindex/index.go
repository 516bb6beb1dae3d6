// Package semindex is the project's semantic index for semantic_search: the text files of one
// root (the walk of the other tools: .gitignore honoured, .git and symlinks left out) cut into
// chunks of lines that overlap, each chunk embedded by the configured embedding model, the
// vectors normalized at insert and written as float16 to a vector file beside the index
// (vecfile.go); memory holds only a binary code of each (one bit a dimension, quant.go). A
// search ranks every chunk by the Hamming distance of the codes and re-ranks the nearest few
// hundred by their float16 rows, read back, against the float query: a million chunks of 768
// dimensions are searched in milliseconds and held in about 300 bytes each. It is pure Go: no
// cgo, no vector database. The index is kept on disk under the state directory (one file per
// root and model) and updated incrementally: a file whose size, modification time, inode and
// change time are those the index stored is not read at all, and one whose stat changed but
// whose content hash did not keeps its vectors. It is built in the background and answers
// searches while partial.
package semindex

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/workspace"
)

// Embed turns texts into vectors, one per text, in order (a providers.Embedder bound to its
// model).
type Embed func(ctx context.Context, texts []string) ([][]float32, error)

// Chunking: a chunk is ChunkLines lines, the next one starting ChunkLines-OverlapLines further,
// so a function cut at a chunk's edge is whole in its neighbour; a chunk is also cut at
// ChunkBytes, so minified lines do not make one huge text.
const (
	ChunkLines   = 60
	OverlapLines = 10
	ChunkBytes   = 4 << 10
	// MaxFileBytes: larger files are data or generated, not worth embedding.
	MaxFileBytes = 1 << 20
	// embedBatch is how many chunks one Embed call carries (the provider batches again).
	embedBatch = 64
	// saveEvery is how many newly embedded files pass between saves of a partial index.
	saveEvery = 200
	// racyMargin: a file whose modification time is not older than a build's start less this
	// margin may have changed again within the file system's time granularity (2 s on FAT, 1 s
	// on some others) after it was read, so its stat is not trusted the next time ("racy git").
	racyMargin = 2 * time.Second
)

// readFile reads a file of the root; tests count the reads through it.
var readFile = workspace.ReadConfined

// Progress is how far a build is: Done of Total files looked at (unchanged ones count at once).
type Progress struct {
	Done, Total int
	// Embedded is the number of files whose chunks were embedded in this build.
	Embedded int
	Err      error
	Finished bool
}

// Index is one root's index. Its methods are safe for concurrent use; Search runs while Build
// goes on, over what is indexed so far.
type Index struct {
	root  string
	file  string
	embed Embed

	mu      sync.RWMutex
	files   map[string]*fileEntry // by path relative to root
	pending int
	dirty   bool
	unsaved bool     // files or their stats changed since the last save
	flat    *matrix  // built from files on the first search after a change
	dim     int      // of every vector; 0 before the first
	cen     centre   // the binary codes' centre
	rows    int      // chunks with a vector
	vec     *vecFile // the float16 rows (vecfile.go); created with the first

	build sync.Mutex // one build or update at a time

	saveMu   sync.Mutex    // one save at a time
	lastSave time.Time     // when the last save ended
	saveCost time.Duration // how long it took
}

type fileEntry struct {
	hash   [32]byte
	stat   fileStat // the zero fileStat when not to be trusted: the file is read next time
	chunks []chunk
}

// fileStat is what tells, without reading it, that a file has not changed since it was indexed.
type fileStat struct {
	size, mtime int64 // mtime in ns since the epoch
	ino         uint64
	ctime       int64
}

func statOf(info fs.FileInfo) fileStat {
	ino, ctime := statIDs(info)
	return fileStat{size: info.Size(), mtime: info.ModTime().UnixNano(), ino: ino, ctime: ctime}
}

// chunk is one span of a file, where its vector's float16 row is in the vector file, and its
// binary code against the index's centre (nil: no vector; written under the index's lock).
type chunk struct {
	start, end int // 1-based lines, inclusive
	off        int64
	code       []uint64
}

// Open returns the index of root kept in file (created on first save), loading what is there;
// file "" keeps the index in memory only. A file that cannot be read is started over, not an
// error: the index is a cache.
func Open(root, file string, embed Embed) *Index {
	ix := &Index{root: root, file: file, embed: embed, files: map[string]*fileEntry{}, dirty: true}
	if file == "" {
		return ix
	}
	if st, err := load(file); err == nil {
		ix.files, ix.vec, ix.dim, ix.cen, ix.unsaved = st.files, st.vec, st.dim, st.cen, st.old
		for _, f := range ix.files {
			ix.rows += len(f.chunks)
		}
	} else {
		ix.unsaved = true
	}
	return ix
}

// Stats says how many files and chunks the index holds and how many files wait to be looked at.
func (ix *Index) Stats() (files, chunks, pending int) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for _, f := range ix.files {
		chunks += len(f.chunks)
	}
	return len(ix.files), chunks, ix.pending
}

// Build brings the index up to date with the files on disk: new and changed files are chunked
// and embedded, deleted ones dropped, unchanged ones kept; a file whose stat is the one stored
// is taken as unchanged without being read, and the index file is written only if something
// changed. progress, if not nil, is called as it
// goes (from Build's goroutine) and once at the end. An embedding failure ends the build with
// what was done so far saved and the error reported.
func (ix *Index) Build(ctx context.Context, progress func(Progress)) error {
	ix.build.Lock()
	defer ix.build.Unlock()
	// racy is the modification time from which a stat is not trusted next time: it is taken
	// before any file is looked at, so a file changed after it was read has a later one.
	racy := time.Now().Add(-racyMargin).UnixNano()
	var paths []string
	var stats []fileStat
	err := tools.WalkProject(ctx, ix.root, func(abs string, d fs.DirEntry) error {
		if info, err := d.Info(); err == nil && info.Size() <= MaxFileBytes && info.Size() > 0 {
			if rel, err := filepath.Rel(ix.root, abs); err == nil {
				paths = append(paths, filepath.ToSlash(rel))
				st := statOf(info)
				if st.mtime >= racy {
					st = fileStat{}
				}
				stats = append(stats, st)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	seen := make(map[string]bool, len(paths))
	for _, p := range paths {
		seen[p] = true
	}
	ix.mu.Lock()
	for p, f := range ix.files {
		if !seen[p] {
			ix.rows -= len(f.chunks)
			delete(ix.files, p)
			ix.dirty, ix.unsaved = true, true
		}
	}
	ix.pending = len(paths)
	ix.mu.Unlock()

	b := &builder{ix: ix, ctx: ctx, progress: progress, paced: true, prog: Progress{Total: len(paths)}}
	return b.run(paths, stats)
}

// Update brings the given files (relative to the root, slashes) up to date without walking the
// project: a file the index holds that changed is read and embedded again, one that is gone or
// no longer a regular file of the root is dropped. A path the index does not hold is left to
// the next Build, whose walk decides whether it is part of the project (.gitignore, links);
// one that is absolute or climbs out of the root is refused. It is what keeps the index fresh
// after the agent or the editor writes a file, at the cost of the files written rather than of
// the project. The index file (which a save rewrites whole: about a second at 100k files) is
// saved only when a save is due by saveDue's rule, else by the next Build or Save; until then
// a restart reads and embeds those files again, since the stats on disk are their old ones.
func (ix *Index) Update(ctx context.Context, rels []string) error {
	for _, rel := range rels {
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("semindex: %q is not a path inside the root", rel)
		}
	}
	ix.build.Lock()
	defer ix.build.Unlock()
	racy := time.Now().Add(-racyMargin).UnixNano()
	var paths []string
	var stats []fileStat
	for _, rel := range rels {
		rel = filepath.ToSlash(filepath.Clean(filepath.FromSlash(rel)))
		ix.mu.RLock()
		_, known := ix.files[rel]
		ix.mu.RUnlock()
		if !known {
			continue
		}
		info, err := os.Lstat(filepath.Join(ix.root, filepath.FromSlash(rel)))
		if err != nil || !info.Mode().IsRegular() || info.Size() == 0 || info.Size() > MaxFileBytes {
			ix.mu.Lock()
			if f := ix.files[rel]; f != nil {
				ix.rows -= len(f.chunks)
				delete(ix.files, rel)
			}
			ix.dirty, ix.unsaved = true, true
			ix.mu.Unlock()
			continue
		}
		st := statOf(info)
		if st.mtime >= racy {
			st = fileStat{}
		}
		paths, stats = append(paths, rel), append(stats, st)
	}
	ix.mu.Lock()
	ix.pending += len(paths)
	ix.mu.Unlock()
	b := &builder{ix: ix, ctx: ctx, update: true, prog: Progress{Total: len(paths)}}
	return b.run(paths, stats)
}

// builder is one Build's or Update's pass over its files.
type builder struct {
	ix       *Index
	ctx      context.Context
	progress func(Progress)
	paced    bool // save a partial index now and then (Build)
	update   bool // Update: save at the end only when a save is due (saveDue)

	prog       Progress
	batch      []pendingChunk
	batchFiles []*pendingFile
	sinceSave  int
}

func (b *builder) report() {
	if b.progress != nil {
		b.progress(b.prog)
	}
}

func (b *builder) run(paths []string, stats []fileStat) error {
	ix := b.ix
	var buildErr error
	for i, rel := range paths {
		if err := b.ctx.Err(); err != nil {
			buildErr = err
			break
		}
		if buildErr = b.visit(rel, stats[i]); buildErr != nil {
			break
		}
	}
	if buildErr == nil {
		buildErr = b.flush()
	}
	ix.mu.Lock()
	ix.pending = 0
	unsaved := ix.unsaved
	ix.mu.Unlock()
	var saveErr error
	if unsaved && (!b.update || ix.saveDue()) {
		saveErr = ix.save()
	}
	b.prog.Finished, b.prog.Err = true, buildErr
	b.report()
	if buildErr != nil {
		return buildErr
	}
	return saveErr
}

// visit looks at one file: unchanged by its stat, unchanged by its hash, gone or not text, or
// to be embedded (queued in the batch, which is embedded when full).
func (b *builder) visit(rel string, st fileStat) error {
	ix := b.ix
	ix.mu.RLock()
	old := ix.files[rel]
	ix.mu.RUnlock()
	done := func() {
		ix.mu.Lock()
		ix.pending--
		ix.mu.Unlock()
		b.prog.Done++
	}
	if old != nil && old.stat != (fileStat{}) && old.stat == st {
		done()
		return nil
	}
	// Through an os.Root of the root: a file the walk saw that became a link out since is
	// refused, so its target is never sent to the embedding model nor shown as a hit.
	data, err := readFile(ix.root, filepath.FromSlash(rel), 0)
	if err != nil || !isText(data) {
		ix.mu.Lock()
		if f, ok := ix.files[rel]; ok {
			ix.rows -= len(f.chunks)
			delete(ix.files, rel)
			ix.dirty, ix.unsaved = true, true
		}
		ix.mu.Unlock()
		done()
		return nil
	}
	sum := sha256.Sum256(data)
	if old != nil && old.hash == sum {
		if old.stat != st {
			// The same content under a new stat (touched, copied back): keep the vectors,
			// store the stat so the next build need not read it.
			ix.mu.Lock()
			ix.files[rel] = &fileEntry{hash: old.hash, stat: st, chunks: old.chunks}
			ix.unsaved = true
			ix.mu.Unlock()
		}
		done()
		return nil
	}
	spans := Chunks(string(data))
	pf := &pendingFile{rel: rel, entry: &fileEntry{hash: sum, stat: st, chunks: make([]chunk, len(spans))}}
	for i, sp := range spans {
		pf.entry.chunks[i] = chunk{start: sp.Start, end: sp.End}
		b.batch = append(b.batch, pendingChunk{file: pf, idx: i, text: "File: " + rel + "\n" + sp.Text})
	}
	b.batchFiles = append(b.batchFiles, pf)
	if len(b.batch) >= embedBatch {
		return b.flush()
	}
	return nil
}

// flush embeds the batch, checks what came back (one finite vector of one dimension for each
// text) before any of it is stored, and adds the batch's files to the index.
func (b *builder) flush() error {
	ix := b.ix
	if len(b.batch) == 0 && len(b.batchFiles) == 0 {
		return nil
	}
	texts := make([]string, len(b.batch))
	for i, c := range b.batch {
		texts[i] = c.text
	}
	var vecs [][]float32
	var err error
	if len(texts) > 0 {
		vecs, err = ix.embed(b.ctx, texts)
	}
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("the embedding model returned %d vectors for %d texts", len(vecs), len(texts))
	}
	for i := 0; err == nil && i < len(vecs); i++ {
		if err = checkVector(vecs[i]); err == nil && len(vecs[i]) != len(vecs[0]) {
			err = fmt.Errorf("the embedding model returned vectors of %d and %d dimensions in one batch", len(vecs[0]), len(vecs[i]))
		}
	}
	if err != nil {
		return err
	}
	if len(vecs) > 0 {
		if err := ix.store(b, vecs); err != nil {
			return err
		}
	}
	ix.mu.Lock()
	for _, f := range b.batchFiles {
		if old := ix.files[f.rel]; old != nil {
			ix.rows -= len(old.chunks)
		}
		ix.files[f.rel] = f.entry
		ix.rows += len(f.entry.chunks)
		ix.pending--
		b.prog.Done++
		b.prog.Embedded++
	}
	ix.dirty, ix.unsaved = true, true
	ix.mu.Unlock()
	if ix.rows > 2*ix.cen.rows {
		if err := ix.recentre(); err != nil {
			return err
		}
	}
	b.sinceSave += len(b.batchFiles)
	b.batch, b.batchFiles = b.batch[:0], b.batchFiles[:0]
	if b.paced && b.sinceSave >= saveEvery && ix.saveDue() {
		b.sinceSave = 0
		_ = ix.save()
	}
	b.report()
	return nil
}

// saveDue says whether a partial save may be made now: a save rewrites the whole file, so
// saving every saveEvery files would make a big build's saves grow with the square of its
// size. Waiting ten times as long as the last save took since it ended keeps the saves under
// a tenth of the build's time whatever its size, and an embedding model that takes seconds a
// batch still gets a save every saveEvery files.
func (ix *Index) saveDue() bool {
	ix.saveMu.Lock()
	defer ix.saveMu.Unlock()
	return time.Since(ix.lastSave) >= 10*ix.saveCost
}

// store writes the batch's vectors (checked, of one dimension) to the vector file and codes
// them. A model whose vectors changed size (the index is per model, so a provider that changed
// what the model returns) makes every vector held useless: the index starts over with the new
// size rather than refuse every build from then on.
func (ix *Index) store(b *builder, vecs [][]float32) error {
	dim := len(vecs[0])
	if ix.dim != dim {
		ix.mu.Lock()
		clear(ix.files)
		ix.dim, ix.cen, ix.rows, ix.dirty, ix.unsaved = dim, centre{}, 0, true, true
		ix.mu.Unlock()
		if ix.vec != nil {
			ix.vec.f.Close()
			ix.vec = nil
		}
	}
	if ix.vec == nil {
		if ix.file != "" {
			if err := os.MkdirAll(filepath.Dir(ix.file), 0o700); err != nil {
				return fmt.Errorf("the semantic index's directory: %w", err)
			}
		}
		vf, err := createVecFile(ix.file)
		if err != nil {
			return fmt.Errorf("the semantic index's vector file: %w", err)
		}
		ix.vec = vf
	}
	for _, v := range vecs {
		normalize(v)
		ix.cen.add(v)
	}
	if ix.cen.v == nil {
		ix.cen.v = ix.cen.mean()
	}
	offs, err := ix.vec.appendRows(vecs)
	if err != nil {
		return fmt.Errorf("the semantic index's vector file: %w", err)
	}
	words := codeWords(dim)
	codes := make([]uint64, words*len(vecs))
	for i := range b.batch {
		c := &b.batch[i].file.entry.chunks[b.batch[i].idx]
		c.off, c.code = offs[i], codes[i*words:(i+1)*words:(i+1)*words]
		codeOf(vecs[i], ix.cen.v, c.code)
	}
	return nil
}

// recentre sets the centre to the running mean and codes every chunk again against it, reading
// the rows back in file order; called with the build lock held, when the rows have doubled
// since the centre was set. A row that cannot be read loses its code (it is not searched).
func (ix *Index) recentre() error {
	ix.mu.RLock()
	var all []*chunk
	for _, f := range ix.files {
		for i := range f.chunks {
			if f.chunks[i].code != nil {
				all = append(all, &f.chunks[i])
			}
		}
	}
	rows := ix.rows
	ix.mu.RUnlock()
	cen := ix.cen.mean()
	sort.Slice(all, func(a, b int) bool { return all[a].off < all[b].off })
	words := codeWords(ix.dim)
	codes := make([]uint64, words*len(all))
	buf := make([]byte, 2*ix.dim)
	v := make([]float32, ix.dim)
	ok := make([]bool, len(all))
	for i, c := range all {
		if ix.vec.readRow(c.off, buf, v) == nil {
			codeOf(v, cen, codes[i*words:(i+1)*words])
			ok[i] = true
		}
	}
	ix.mu.Lock()
	for i, c := range all {
		if ok[i] {
			c.code = codes[i*words : (i+1)*words : (i+1)*words]
		} else {
			c.code = nil
		}
	}
	ix.cen.v, ix.cen.rows = cen, rows
	ix.dirty, ix.unsaved = true, true
	ix.mu.Unlock()
	return nil
}

type pendingFile struct {
	rel   string
	entry *fileEntry
}

type pendingChunk struct {
	file *pendingFile
	idx  int
	text string
}

// isText: no NUL in the first 8 KB and valid enough UTF-8 to be worth embedding.
func isText(b []byte) bool {
	head := b[:min(len(b), 8<<10)]
	return bytes.IndexByte(head, 0) < 0
}

// Span is one chunk of a file: its 1-based first and last line and its text.
type Span struct {
	Start, End int
	Text       string
}

// Chunks cuts text into overlapping spans of at most ChunkLines lines and ChunkBytes bytes.
func Chunks(text string) []Span {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var out []Span
	for start := 0; start < len(lines); {
		end, size := start, 0
		for end < len(lines) && end-start < ChunkLines && (end == start || size+len(lines[end]) <= ChunkBytes) {
			size += len(lines[end])
			end++
		}
		var b strings.Builder
		for _, l := range lines[start:end] {
			b.WriteString(l)
		}
		t := b.String()
		if len(t) > ChunkBytes {
			t = t[:ChunkBytes] // one very long line
		}
		if strings.TrimSpace(t) != "" {
			out = append(out, Span{Start: start + 1, End: end, Text: t})
		}
		if end >= len(lines) {
			break
		}
		next := end - OverlapLines
		if next <= start {
			next = end
		}
		start = next
	}
	return out
}

// Hit is one search result: a chunk of a file (path relative to the root, slashes).
type Hit struct {
	Path       string
	Start, End int
	Score      float32
}

// ErrEmpty is returned by Search when nothing is indexed yet.
var ErrEmpty = errors.New("nothing is indexed yet")

// Search embeds query and returns the k chunks most similar to it, best first, among what is
// indexed now.
func (ix *Index) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	vecs, err := ix.embed(ctx, []string{query})
	if err != nil {
		return nil, err
	}
	if len(vecs) != 1 || len(vecs[0]) == 0 {
		return nil, errors.New("the embedding model returned no vector for the query")
	}
	q := vecs[0]
	if err := checkVector(q); err != nil {
		return nil, err
	}
	normalize(q)
	m := ix.matrix()
	if m.n == 0 {
		return nil, ErrEmpty
	}
	if m.dim != len(q) {
		return nil, fmt.Errorf("the query vector has %d dimensions and the index %d: the embedding model changed; the index is rebuilt on the next start", len(q), m.dim)
	}
	top := m.top(q, k)
	out := make([]Hit, len(top))
	for i, t := range top {
		r := m.rows[t.i]
		out[i] = Hit{Path: r.path, Start: r.c.start, End: r.c.end, Score: t.score}
	}
	return out, nil
}

// matrix is the flat search structure, rebuilt after a change.
func (ix *Index) matrix() *matrix {
	ix.mu.RLock()
	if !ix.dirty && ix.flat != nil {
		m := ix.flat
		ix.mu.RUnlock()
		return m
	}
	ix.mu.RUnlock()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.dirty || ix.flat == nil {
		ix.flat = buildMatrix(ix.files, ix.dim, ix.cen.v, ix.vec)
		ix.dirty = false
	}
	return ix.flat
}

// Save writes the index to its file atomically (a temporary file renamed over it), streamed
// from a snapshot of the files so that neither searches wait for the disk nor the encoding is
// held in memory whole; an index opened without a file keeps nothing. It waits for a build.
func (ix *Index) Save() error {
	ix.build.Lock()
	defer ix.build.Unlock()
	return ix.save()
}

// save is Save with the build lock held (a build's own saves): the vector file may be
// compacted, which no build may append to meanwhile.
func (ix *Index) save() error {
	if ix.file == "" {
		return nil
	}
	ix.saveMu.Lock()
	defer ix.saveMu.Unlock()
	t0 := time.Now()
	ix.compactVectors()
	ix.mu.Lock()
	snap := make([]namedEntry, 0, len(ix.files))
	for p, f := range ix.files {
		snap = append(snap, namedEntry{p, f})
	}
	h := header{dim: ix.dim, cen: ix.cen}
	h.cen.sum = append([]float64(nil), ix.cen.sum...)
	if ix.vec != nil {
		h.vecID = ix.vec.id
	}
	vec := ix.vec
	ix.unsaved = false
	ix.mu.Unlock()
	sort.Slice(snap, func(i, j int) bool { return snap[i].path < snap[j].path })
	err := writeAtomic(ix.file, func(w io.Writer) error { return encode(w, h, snap) })
	if err != nil {
		ix.mu.Lock()
		ix.unsaved = true
		ix.mu.Unlock()
	} else {
		// The index on disk names vec now: older vector files are garbage.
		removeOtherVecFiles(ix.file, vec)
	}
	ix.lastSave, ix.saveCost = time.Now(), time.Since(t0)
	return err
}

// compactVectors copies the live rows into a new vector file once they are under half of the
// old one (files embedded again leave their old rows behind). The old file stays until the
// index naming the new one is written (save); searches under way keep reading the old one
// through their matrix.
func (ix *Index) compactVectors() {
	if ix.vec == nil {
		return
	}
	ix.mu.RLock()
	live := int64(ix.rows) * int64(2*ix.dim)
	if ix.vec.size-vecHeader <= 2*live+(1<<20) {
		ix.mu.RUnlock()
		return
	}
	// Copies of the entries, made under the lock (recentre writes the chunks' codes).
	moved := make(map[string]*fileEntry, len(ix.files))
	for p, f := range ix.files {
		moved[p] = &fileEntry{hash: f.hash, stat: f.stat, chunks: append([]chunk(nil), f.chunks...)}
	}
	ix.mu.RUnlock()
	nv, err := createVecFile(ix.file)
	if err != nil {
		return
	}
	fail := func() {
		nv.f.Close()
		if nv.path != "" {
			os.Remove(nv.path)
		}
	}
	buf := make([]byte, 2*ix.dim)
	for _, nf := range moved {
		for i := range nf.chunks {
			c := &nf.chunks[i]
			if c.code == nil {
				continue
			}
			if _, err := ix.vec.f.ReadAt(buf, c.off); err != nil {
				c.code = nil // unreadable: no longer searched
				continue
			}
			if _, err := nv.f.WriteAt(buf, nv.size); err != nil {
				fail()
				return
			}
			c.off, nv.size = nv.size, nv.size+int64(len(buf))
		}
	}
	ix.mu.Lock()
	for p, nf := range moved {
		if ix.files[p] != nil {
			ix.files[p] = nf
		}
	}
	ix.vec = nv
	ix.dirty, ix.unsaved = true, true
	ix.mu.Unlock()
}

type namedEntry struct {
	path string
	f    *fileEntry
}

func writeAtomic(file string, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", file, time.Now().UnixNano())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Root is the directory the index covers.
func (ix *Index) Root() string { return ix.root }
