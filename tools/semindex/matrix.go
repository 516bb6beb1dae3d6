package semindex

import (
	"runtime"
	"sort"
	"sync"
)

// matrix is what a search scans: every chunk's binary code in one contiguous []uint64 (row i at
// i*words), read front to back, and for each row its chunk (the int8 vector the best rows are
// re-ranked with) and file.
type matrix struct {
	n, dim, words int
	center        []float32
	codes         []uint64
	rows          []row
	vec           *vecFile // the float16 rows of the last step; nil: int8 scores are final
}

type row struct {
	path string
	c    *chunk
}

// centre is the index's centre for binary codes and the generation of the codes made against
// it. It is computed again only when the number of rows has doubled or halved since, so a
// matrix rebuilt after one file changed codes only that file's chunks (the rest keep theirs)
// and the cost of recentring stays linear in the index's growth.
type centre struct {
	v    []float32
	rows int
	gen  uint32
}

// buildMatrix gathers the rows of the most common dimension (a chunk of another one is from an
// older model and is not searched), recentring if needed and coding the chunks that have no
// code of the current generation.
func buildMatrix(files map[string]*fileEntry, cen *centre) *matrix {
	byDim := map[int]int{}
	for _, f := range files {
		for i := range f.chunks {
			if d := len(f.chunks[i].q); d > 0 {
				byDim[d]++
			}
		}
	}
	m := &matrix{}
	for d, n := range byDim {
		if n > m.n || n == m.n && d > m.dim {
			m.dim, m.n = d, n
		}
	}
	if m.n == 0 {
		m.n, m.dim = 0, 0
		return m
	}
	m.words = codeWords(m.dim)
	m.rows = make([]row, 0, m.n)
	for p, f := range files {
		for i := range f.chunks {
			if len(f.chunks[i].q) == m.dim {
				m.rows = append(m.rows, row{path: p, c: &f.chunks[i]})
			}
		}
	}
	if len(cen.v) != m.dim || m.n > 2*cen.rows || 2*m.n < cen.rows {
		sum := make([]float64, m.dim)
		for _, r := range m.rows {
			s := float64(r.c.scale)
			for j, x := range r.c.q {
				sum[j] += float64(x) * s
			}
		}
		cen.v = make([]float32, m.dim)
		for j := range sum {
			cen.v[j] = float32(sum[j] / float64(m.n))
		}
		cen.rows = m.n
		cen.gen++
	}
	m.center = cen.v
	// One backing array for the codes made now, so that coding a million chunks is not a
	// million allocations.
	var missing int
	for _, r := range m.rows {
		if r.c.codeGen != cen.gen || len(r.c.code) != m.words {
			missing++
		}
	}
	fresh := make([]uint64, missing*m.words)
	m.codes = make([]uint64, m.n*m.words)
	for i, r := range m.rows {
		if r.c.codeGen != cen.gen || len(r.c.code) != m.words {
			r.c.code, fresh = fresh[:m.words:m.words], fresh[m.words:]
			codeOfInt8(r.c.q, r.c.scale, cen.v, r.c.code)
			r.c.codeGen = cen.gen
		}
		copy(m.codes[i*m.words:], r.c.code)
	}
	return m
}

type scored struct {
	i     int
	score float32
}

// Re-ranking: the rows nearest the query by Hamming distance, at least rerankMin and
// rerankPerHit for each hit asked, are ranked again by their int8 vectors, and the best of
// those, at least finalMin and finalPerHit for each hit, by their float16 rows read from the
// vector file. The figures hold recall@10 at or above 0.95 against the exact float search on
// TestRecallAgainstExactSearch's distribution (docs/benchmarks.md).
var (
	rerankMin    = 500
	rerankPerHit = 50
	finalMin     = 50
	finalPerHit  = 5
)

// scanWorkers is how many goroutines share the Hamming scan of a large matrix.
var scanWorkers = runtime.GOMAXPROCS(0)

// top returns the k rows best for q (unit length), best first: every row's code against the
// query's, then the nearest rerank rows by their int8 vectors. An index no larger than the
// re-ranked set is ranked by its int8 vectors alone.
func (m *matrix) top(q []float32, k int) []scored {
	if k <= 0 || m.n == 0 {
		return nil
	}
	r := max(rerankMin, rerankPerHit*k)
	var cand []int
	if m.n <= r {
		cand = make([]int, m.n)
		for i := range cand {
			cand[i] = i
		}
	} else {
		cand = m.nearestCodes(q, r)
	}
	out := make([]scored, len(cand))
	for j, i := range cand {
		c := m.rows[i].c
		out[j] = scored{i, dotInt8(q, c.q) * c.scale}
	}
	m.sort(out)
	if m.vec != nil {
		final := out[:min(len(out), max(finalMin, finalPerHit*k))]
		buf := make([]byte, 2*m.dim)
		v := make([]float32, m.dim)
		for j := range final {
			c := m.rows[final[j].i].c
			// A row that cannot be read keeps its int8 score.
			if c.off != 0 && m.vec.readRow(c.off, buf, v) == nil {
				final[j].score = dotF32(q, v)
			}
		}
		m.sort(final)
	}
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// sort orders rows best first, ties by path and line so that a search is repeatable.
func (m *matrix) sort(out []scored) {
	sort.Slice(out, func(a, b int) bool {
		if out[a].score != out[b].score {
			return out[a].score > out[b].score
		}
		ra, rb := m.rows[out[a].i], m.rows[out[b].i]
		if ra.path != rb.path {
			return ra.path < rb.path
		}
		return ra.c.start < rb.c.start
	})
}

// nearestCodes returns the r rows (r < n) whose codes are nearest the code of q: every row's
// distance and a histogram of them (the distances are small integers), then the rows under the
// distance at which the count reaches r, and of the rows at that distance the first ones.
func (m *matrix) nearestCodes(q []float32, r int) []int {
	qc := make([]uint64, m.words)
	codeOfFloat(q, m.center, qc)
	dist := make([]uint16, m.n)
	workers := 1
	if m.n >= 32768 {
		workers = max(1, scanWorkers)
	}
	per := (m.n + workers - 1) / workers
	hists := make([][]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*per, min((w+1)*per, m.n)
		hist := make([]int, m.dim+1)
		hists[w] = hist
		if lo >= hi {
			continue
		}
		wg.Go(func() {
			words := m.words
			codes := m.codes[lo*words : hi*words]
			d := dist[lo:hi]
			for i := range d {
				h := hamming(qc, codes[i*words:(i+1)*words])
				d[i] = uint16(h)
				hist[h]++
			}
		})
	}
	wg.Wait()
	cut, below := 0, 0
	for ; cut <= m.dim; cut++ {
		n := 0
		for _, h := range hists {
			n += h[cut]
		}
		if below+n >= r {
			break
		}
		below += n
	}
	atCut := r - below
	cand := make([]int, 0, r)
	for i, d := range dist {
		if int(d) < cut {
			cand = append(cand, i)
		} else if int(d) == cut && atCut > 0 {
			cand = append(cand, i)
			atCut--
		}
	}
	return cand
}
