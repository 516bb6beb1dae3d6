package semindex

import (
	"container/heap"
	"math"
	"runtime"
	"sort"
	"sync"
)

// matrix is every vector of the index in one contiguous []float32 (row i at i*dim), which a scan
// reads front to back, and what each row is.
type matrix struct {
	n, dim int
	data   []float32
	refs   []ref
}

type ref struct {
	path       string
	start, end int
}

func buildMatrix(files map[string]*fileEntry) *matrix {
	m := &matrix{}
	for _, f := range files {
		for _, c := range f.chunks {
			if len(c.vec) > 0 {
				m.dim = len(c.vec)
				break
			}
		}
		if m.dim > 0 {
			break
		}
	}
	if m.dim == 0 {
		return m
	}
	rows := 0
	for _, f := range files {
		for _, c := range f.chunks {
			if len(c.vec) == m.dim {
				rows++
			}
		}
	}
	m.data = make([]float32, 0, rows*m.dim)
	m.refs = make([]ref, 0, rows)
	for _, p := range sortedKeys(files) {
		chunks := files[p].chunks
		for j, c := range chunks {
			if len(c.vec) != m.dim {
				continue // a vector of another model, left from an older build
			}
			off := len(m.data)
			m.data = append(m.data, c.vec...)
			// The entry shares the matrix's copy, so the vectors are held once.
			chunks[j].vec = m.data[off : off+m.dim : off+m.dim]
			m.refs = append(m.refs, ref{path: p, start: c.start, end: c.end})
		}
	}
	m.n = len(m.refs)
	return m
}

// normalize scales v to unit length, so cosine similarity is a dot product.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// dot is the inner product, unrolled by eight: the scan spends its time here.
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

type scored struct {
	i     int
	score float32
}

// minHeap keeps the k best seen so far, the worst on top.
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// top scans every row against q (unit length) and returns the k best, best first. The rows are
// split among the processors; each keeps its own k best, merged at the end.
func (m *matrix) top(q []float32, k int) []scored {
	if k <= 0 || m.n == 0 {
		return nil
	}
	workers := 1
	if m.n >= 4096 {
		workers = runtime.GOMAXPROCS(0)
	}
	per := (m.n + workers - 1) / workers
	results := make([][]scored, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := w*per, min((w+1)*per, m.n)
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			h := make(minHeap, 0, k+1)
			for i := lo; i < hi; i++ {
				s := dot(q, m.data[i*m.dim:(i+1)*m.dim])
				if len(h) < k {
					heap.Push(&h, scored{i, s})
				} else if s > h[0].score {
					h[0] = scored{i, s}
					heap.Fix(&h, 0)
				}
			}
			results[w] = h
		})
	}
	wg.Wait()
	var all []scored
	for _, r := range results {
		all = append(all, r...)
	}
	sort.Slice(all, func(a, b int) bool {
		if all[a].score != all[b].score {
			return all[a].score > all[b].score
		}
		return all[a].i < all[b].i
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}
