//go:build linux

package tools_test

// Issue 34 item 2: the semantic index on the 100k-file project of scale_bench_test.go, with an
// embedder that answers at once, so what is measured is agentd's side (walk, read, hash, chunk,
// quantize, store, save). bench/scale.sh runs it once (-benchtime 1x): a build takes seconds.

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentd-dev/agentd/tools"
	"github.com/agentd-dev/agentd/tools/semindex"
)

// instantEmbed is a dense stand-in for a model, computed at once: each of a text's first 32
// distinct words adds its bucket's random unit vector (1,024 buckets, 3 MiB), so texts that
// share words point the same way over every dimension, as a model's vectors do (a sparse bag of
// words would leave the binary codes nothing to see). spent adds up the time spent in it, to be
// told apart from agentd's.
func instantEmbed(dim int, spent *time.Duration) semindex.Embed {
	const buckets = 1024
	table := make([]float32, buckets*dim)
	r := rand.New(rand.NewPCG(34, 2))
	for i := range table {
		table[i] = float32(r.NormFloat64())
	}
	return func(_ context.Context, texts []string) ([][]float32, error) {
		t0 := time.Now()
		out := make([][]float32, len(texts))
		seen := map[uint32]bool{}
		for i, t := range texts {
			v := make([]float32, dim)
			clear(seen)
			start := -1
			for j := 0; j <= len(t) && len(seen) < 32; j++ {
				letter := j < len(t) && (t[j] >= 'a' && t[j] <= 'z' || t[j] >= 'A' && t[j] <= 'Z')
				if letter && start < 0 {
					start = j
				} else if !letter && start >= 0 {
					h := fnv.New32a()
					h.Write([]byte(strings.ToLower(t[start:j])))
					k := h.Sum32() % buckets
					if !seen[k] {
						seen[k] = true
						row := table[int(k)*dim : int(k+1)*dim]
						for d := range v {
							v[d] += row[d]
						}
					}
					start = -1
				}
			}
			v[0] += 0.01 // never the zero vector
			out[i] = v
		}
		*spent += time.Since(t0)
		return out, nil
	}
}

// cpu is the process's CPU time so far (user and system).
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func vmRSS() float64 {
	data, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkSemindexAt100k builds the index of the whole project (768 dimensions) from nothing
// and reports files and chunks a second, the peak RSS of the process over the build (the
// high-water mark reset after a GC that returned the heap, the baseline reported beside it),
// the heap the index holds at the end, and the index's sizes; then, on that index, one file changed: Update of that file alone, the
// first search after it (which rebuilds the search matrix), a search, a Build after one more
// change (the walk of every file), and a Build with nothing changed.
func BenchmarkSemindexAt100k(b *testing.B) {
	root := tools.ScaleRoot(b)
	const dim = 768
	var spent time.Duration
	embed := instantEmbed(dim, &spent)
	// The file changed: the first Go file of the first directory, put back as it was at the end.
	rel := filepath.ToSlash(filepath.Join("n50k", "n10k", "d0000", "f000000.go"))
	abs := filepath.Join(root, filepath.FromSlash(rel))
	orig, err := os.ReadFile(abs)
	if err != nil {
		b.Fatal(err)
	}
	st0, _ := os.Stat(abs)
	b.Cleanup(func() {
		os.WriteFile(abs, orig, 0o644)
		os.Chtimes(abs, st0.ModTime(), st0.ModTime())
	})
	// The tree was written just now: age it past the racy margin, as a project is.
	old := time.Now().Add(-time.Hour)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	for b.Loop() {
		dir := b.TempDir()
		file := filepath.Join(dir, "index.bin")
		runtime.GC()
		debug.FreeOSMemory()
		base := vmRSS()
		peak := tools.PeakRSS()
		ix := semindex.Open(root, file, embed)
		spent = 0
		t0, c0 := time.Now(), cpu()
		var last semindex.Progress
		if err := ix.Build(context.Background(), func(p semindex.Progress) { last = p }); err != nil {
			b.Fatal(err)
		}
		secs := time.Since(t0).Seconds()
		b.ReportMetric((cpu() - c0).Seconds(), "build-cpu-s")
		peakMiB := float64(peak()) / (1 << 20)
		files, chunks, _ := ix.Stats()
		if last.Embedded != files || files < 1000 {
			b.Fatalf("embedded %d of %d files", last.Embedded, files)
		}
		b.ReportMetric(secs, "build-s")
		b.ReportMetric(spent.Seconds(), "embedder-s")
		b.ReportMetric(float64(files)/secs, "files/s")
		b.ReportMetric(float64(chunks)/secs, "chunks/s")
		b.ReportMetric(float64(chunks), "chunks")
		b.ReportMetric(peakMiB, "peak-MiB")
		b.ReportMetric(base, "base-MiB")
		if st, err := os.Stat(file); err == nil {
			b.ReportMetric(float64(st.Size())/(1<<20), "index-MiB")
		}
		if vecs, _ := filepath.Glob(file + ".vec-*"); len(vecs) == 1 {
			if st, err := os.Stat(vecs[0]); err == nil {
				b.ReportMetric(float64(st.Size())/(1<<20), "vec-MiB")
			}
		}
		ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
		query := "HandleRequest deadline exceeded case"
		if _, err := ix.Search(context.Background(), query, 10); err != nil {
			b.Fatal(err)
		}

		// One file changes: the agent's edit, say.
		if err := os.WriteFile(abs, append([]byte("// zebra quokka marmot\n"), orig...), 0o644); err != nil {
			b.Fatal(err)
		}
		os.Chtimes(abs, old.Add(time.Minute), old.Add(time.Minute))
		t0, c0 = time.Now(), cpu()
		if err := ix.Update(context.Background(), []string{rel}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(time.Since(t0)), "update-ms")
		b.ReportMetric(ms(cpu()-c0), "update-cpu-ms")
		t0, c0 = time.Now(), cpu()
		hits, err := ix.Search(context.Background(), "zebra quokka marmot", 3)
		if err != nil || len(hits) == 0 || hits[0].Path != rel {
			b.Fatalf("the changed file is not found first: %+v %v", hits, err)
		}
		b.ReportMetric(ms(time.Since(t0)), "search-after-update-ms")
		b.ReportMetric(ms(cpu()-c0), "search-after-update-cpu-ms")
		t0, c0 = time.Now(), cpu()
		const queries = 20
		for range queries {
			if _, err := ix.Search(context.Background(), query, 10); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(ms(time.Since(t0))/queries, "search-ms")
		b.ReportMetric(ms(cpu()-c0)/queries, "search-cpu-ms")
		// The save Update left to later (the index file is rewritten whole).
		t0, c0 = time.Now(), cpu()
		if err := ix.Save(); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(time.Since(t0)), "save-ms")
		b.ReportMetric(ms(cpu()-c0), "save-cpu-ms")

		// The same through a Build (every file walked and stat'ed), and with nothing changed.
		os.WriteFile(abs, append([]byte("// zebra quokka wombat\n"), orig...), 0o644)
		os.Chtimes(abs, old.Add(2*time.Minute), old.Add(2*time.Minute))
		t0, c0 = time.Now(), cpu()
		if err := ix.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(time.Since(t0)), "build-one-changed-ms")
		b.ReportMetric(ms(cpu()-c0), "build-one-changed-cpu-ms")
		t0, c0 = time.Now(), cpu()
		if err := ix.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ms(time.Since(t0)), "build-unchanged-ms")
		b.ReportMetric(ms(cpu()-c0), "build-unchanged-cpu-ms")
		// What the index holds (live after a collection), against which the peak is read: the
		// collector lets the heap grow to about twice that between collections (GOGC=100).
		runtime.GC()
		var ms2 runtime.MemStats
		runtime.ReadMemStats(&ms2)
		b.ReportMetric(float64(ms2.HeapAlloc)/(1<<20), "live-MiB")
		runtime.KeepAlive(ix)
	}
}
