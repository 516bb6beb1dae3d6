package semindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

func randomMatrix(n, dim int) *matrix {
	r := rand.New(rand.NewPCG(1, 2))
	m := &matrix{n: n, dim: dim, data: make([]float32, n*dim), refs: make([]ref, n)}
	for i := range n {
		row := m.data[i*dim : (i+1)*dim]
		for j := range row {
			row[j] = float32(r.NormFloat64())
		}
		normalize(row)
		m.refs[i] = ref{path: "f.go", start: i, end: i + 60}
	}
	return m
}

// BenchmarkSearch is one query's scan (top 10 by cosine) over 10k and 100k chunks of 768 and
// 1536 dimensions; the query's own embedding (one request to the model) is not included.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, dim := range []int{384, benchDim, 1536} {
			b.Run(fmt.Sprintf("chunks=%d/dim=%d", n, dim), func(b *testing.B) {
				m := randomMatrix(n, dim)
				q := append([]float32(nil), m.data[:dim]...)
				b.ResetTimer()
				cpu0 := cpuTime()
				for range b.N {
					if top := m.top(q, 10); top[0].i != 0 {
						b.Fatal("the query's own row is not first")
					}
				}
				reportCPU(b, cpu0)
			})
		}
	}
}
