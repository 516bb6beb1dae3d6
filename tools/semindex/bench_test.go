package semindex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// reportCPU adds cpu-ms/op, the process CPU per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64(cpuTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// benchDim is the vector size the benchmarks use: nomic-embed-text's and Gemini's truncated
// size; OpenAI's text-embedding-3-small is 1536, all-minilm 384.
const benchDim = 768

// stubEmbed returns a fixed unit-ish vector per text at once: the benchmarks measure agentd's
// side of indexing (walk, read, hash, chunk, store), not the model's.
func stubEmbed(dim int) Embed {
	return func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, t := range texts {
			v := make([]float32, dim)
			v[len(t)%dim] = 1
			v[(len(t)*7)%dim] += 0.5
			out[i] = v
		}
		return out, nil
	}
}

// benchProject writes files source files of about 6 KB each (150 lines of Go-like text), last
// modified an hour ago (a tree the index saw before, not one being written now).
func benchProject(b *testing.B, files int) (root string, bytes int64) {
	root = b.TempDir()
	old := time.Now().Add(-time.Hour)
	for i := range files {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package p%d\n\n", i/50)
		for l := range 150 {
			fmt.Fprintf(&sb, "func f%d_%d(x int) int { return x*%d + %d } // helper %d\n", i, l, l, i, l)
		}
		p := filepath.Join(root, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("f%04d.go", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(sb.String()), 0o644)
		os.Chtimes(p, old, old)
		bytes += int64(sb.Len())
	}
	return root, bytes
}

// BenchmarkIndexBuild is a full build of a 1000-file project with the embeddings stubbed:
// files/s, MB/s of source, and the index file's size per MB of source.
func BenchmarkIndexBuild(b *testing.B) {
	const files = 1000
	root, size := benchProject(b, files)
	b.ResetTimer()
	cpu0 := cpuTime()
	var indexSize int64
	for range b.N {
		file := filepath.Join(b.TempDir(), "index.bin")
		ix := Open(root, file, stubEmbed(benchDim))
		if err := ix.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
		if st, err := os.Stat(file); err == nil {
			indexSize = st.Size()
		}
	}
	reportCPU(b, cpu0)
	secs := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(files/secs, "files/s")
	b.ReportMetric(float64(size)/(1<<20)/secs, "MB/s")
	b.ReportMetric(float64(indexSize)/(float64(size)/(1<<20))/(1<<20), "index-MB/source-MB")
}

// BenchmarkIndexRebuildUnchanged is the incremental case: nothing changed since the last build
// (a session's start), so the files are walked and stat'ed, none read, the index not rewritten.
func BenchmarkIndexRebuildUnchanged(b *testing.B) {
	const files = 1000
	root, _ := benchProject(b, files)
	ix := Open(root, filepath.Join(b.TempDir(), "index.bin"), stubEmbed(benchDim))
	if err := ix.Build(context.Background(), nil); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		if err := ix.Build(context.Background(), nil); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu0)
	b.ReportMetric(files/(b.Elapsed().Seconds()/float64(b.N)), "files/s")
}

// benchChunks is the sizes BenchmarkSearch runs at; AGENTD_SEMINDEX_CHUNKS adds one (1000000
// for the million, about 1.2 GB of memory and a minute to generate).
func benchChunks() []int {
	sizes := []int{10_000, 100_000}
	if s := os.Getenv("AGENTD_SEMINDEX_CHUNKS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			sizes = append(sizes, n)
		}
	}
	return sizes
}

// BenchmarkSearch is one query (top 10) over 10k and 100k chunks of embedding-like vectors
// (realistic_test.go) at 384, 768 and 1536 dimensions: the Hamming pass and the int8 re-rank,
// with the exact float scan of the same rows (the float32 vectors the index held before, and
// what it would cost now) measured beside it as the anchor. Reported: CPU and wall per query of
// each, the index's bytes per chunk in memory, and recall@10 against the exact search. The
// query's own embedding (one request to the model) is not included.
func BenchmarkSearch(b *testing.B) {
	for _, n := range benchChunks() {
		for _, dim := range []int{384, benchDim, 1536} {
			if n > 100_000 && dim != benchDim {
				continue
			}
			b.Run(fmt.Sprintf("chunks=%d/dim=%d", n, dim), func(b *testing.B) {
				c := makeCorpus(n, dim, 20, 10, b.TempDir())
				b.ResetTimer()
				cpu0 := cpuTime()
				qi := 0
				for range b.N {
					if top := c.m.top(c.queries[qi%len(c.queries)], 10); len(top) != 10 {
						b.Fatal("fewer than 10 hits")
					}
					qi++
				}
				reportCPU(b, cpu0)
				b.StopTimer()
				b.ReportMetric(c.recall(10), "recall@10")
				// Memory: the code twice (the chunk's and the matrix's copy), the chunk and
				// the matrix row; on disk 2 bytes a dimension.
				b.ReportMetric(float64(2*codeWords(dim)*8+int(unsafe.Sizeof(chunk{}))+int(unsafe.Sizeof(row{}))), "mem-bytes/chunk")
				b.ReportMetric(float64(2*dim), "disk-bytes/chunk")
				// Recall and CPU per query at other sizes of the re-ranked set.
				if os.Getenv("AGENTD_SEMINDEX_RERANK") != "" {
					defer func(r, p int) { rerankMin, rerankPer = r, p }(rerankMin, rerankPer)
					rerankPer = 1 << 30
					for _, r := range []int{500, 1000, 2000, 4000} {
						rerankMin = r
						c0 := cpuTime()
						for i := range 20 {
							c.m.top(c.queries[i%len(c.queries)], 10)
						}
						b.ReportMetric(float64(cpuTime()-c0)/float64(time.Millisecond)/20, fmt.Sprintf("cpu-ms-R%d", r))
						b.ReportMetric(c.recall(10), fmt.Sprintf("recall@10-R%d", r))
					}
					rerankMin, rerankPer = 500, 250
				}
				// The anchor: the exact float scan over the same rows, as many queries.
				g := newRealistic(dim, n)
				rows := make([]float32, n*dim)
				for i := range n {
					v := rows[i*dim : (i+1)*dim]
					g.vector(uint64(i), v)
					normalize(v)
				}
				t0, c0 := time.Now(), cpuTime()
				for i := range b.N {
					e := &exactTop{k: 10}
					q := c.queries[i%len(c.queries)]
					for r := range n {
						e.add(r, dot(q, rows[r*dim:(r+1)*dim]))
					}
				}
				b.ReportMetric(float64(time.Since(t0))/float64(time.Millisecond)/float64(b.N), "exact-ms/op")
				b.ReportMetric(float64(cpuTime()-c0)/float64(time.Millisecond)/float64(b.N), "exact-cpu-ms/op")
			})
		}
	}
}

// dot is the float inner product unrolled by eight, as the index's float scan was.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
		s4 += a[i+4] * b[i+4]
		s5 += a[i+5] * b[i+5]
		s6 += a[i+6] * b[i+6]
		s7 += a[i+7] * b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3) + (s4 + s5) + (s6 + s7)
}
