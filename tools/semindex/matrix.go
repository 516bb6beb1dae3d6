package semindex

import (
	"runtime"
	"sort"
	"sync"
)

// matrix is what a search scans: every chunk's binary code in one contiguous []uint64 (row i at
// i*words), read front to back, and for each row its chunk (where its float16 row is) and file.
type matrix struct {
	n, dim, words int
	center        []float32
	codes         []uint64
	rows          []row
	vec           *vecFile
}

type row struct {
	path string
	c    *chunk
}

// centre is the index's centre for binary codes: the mean of every vector embedded into the
// index (sum/n, kept as a running sum, so a removed file's vectors stay in it: a centre need
// only be near the middle). The codes are made against the centre of the moment and all made
// again when the number of rows has doubled since (recentre), so the cost stays linear in
// the index's growth.
type centre struct {
	v    []float32
	sum  []float64
	n    int // vectors in sum
	rows int // rows when v was set
}

// add adds a normalized vector to the running sum.
func (c *centre) add(v []float32) {
	if len(c.sum) != len(v) {
		c.sum, c.n = make([]float64, len(v)), 0
	}
	for i, x := range v {
		c.sum[i] += float64(x)
	}
	c.n++
}

// mean is the running mean.
func (c *centre) mean() []float32 {
	m := make([]float32, len(c.sum))
	for i, s := range c.sum {
		m[i] = float32(s / float64(max(1, c.n)))
	}
	return m
}

// buildMatrix gathers the rows that have a code of the index's dimension.
func buildMatrix(files map[string]*fileEntry, dim int, center []float32, vec *vecFile) *matrix {
	m := &matrix{dim: dim, words: codeWords(dim), center: center, vec: vec}
	if dim == 0 || len(center) != dim {
		return &matrix{}
	}
	for _, f := range files {
		for i := range f.chunks {
			if len(f.chunks[i].code) == m.words {
				m.n++
			}
		}
	}
	m.rows = make([]row, 0, m.n)
	m.codes = make([]uint64, 0, m.n*m.words)
	for p, f := range files {
		for i := range f.chunks {
			if c := &f.chunks[i]; len(c.code) == m.words {
				m.rows = append(m.rows, row{path: p, c: c})
				m.codes = append(m.codes, c.code...)
			}
		}
	}
	return m
}

type scored struct {
	i     int
	score float32
}

// Re-ranking: the rows nearest the query by Hamming distance, at least rerankMin, rerankPerHit
// for each hit asked and one in rerankPer of the rows, are read back and ranked by their
// float16 rows. The share grows with the index because the codes' noise lets more rows crowd
// the true neighbours as there are more rows: on TestRecallAgainstExactSearch's distribution
// recall@10 is 0.99 with 500 of 40,000 rows, and at a million rows 0.81 with 500, 0.94 with
// 2,000 and 0.96 with 4,000 (docs/benchmarks.md).
var (
	rerankMin    = 500
	rerankPerHit = 50
	rerankPer    = 250
)

// scanWorkers is how many goroutines share the Hamming scan of a large matrix.
var scanWorkers = runtime.GOMAXPROCS(0)

// top returns the k rows best for q (unit length), best first: every row's code against the
// query's, then the nearest by their float16 rows. An index no larger than the re-ranked set is
// ranked by its float16 rows alone. A row that cannot be read (the vector file cut short) is
// left out.
func (m *matrix) top(q []float32, k int) []scored {
	if k <= 0 || m.n == 0 {
		return nil
	}
	r := max(rerankMin, rerankPerHit*k, m.n/rerankPer)
	var cand []int
	if m.n <= r {
		cand = make([]int, m.n)
		for i := range cand {
			cand[i] = i
		}
	} else {
		cand = m.nearestCodes(q, r)
	}
	// Read in file order: rows embedded together sit together.
	sort.Slice(cand, func(a, b int) bool { return m.rows[cand[a]].c.off < m.rows[cand[b]].c.off })
	out := make([]scored, 0, len(cand))
	buf := make([]byte, 2*m.dim)
	v := make([]float32, m.dim)
	for _, i := range cand {
		if m.vec.readRow(m.rows[i].c.off, buf, v) == nil {
			out = append(out, scored{i, dotF32(q, v)})
		}
	}
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
	if len(out) > k {
		out = out[:k]
	}
	return out
}

// nearestCodes returns the r rows (r < n) whose codes are nearest the code of q: every row's
// distance and a histogram of them (the distances are small integers), then the rows under the
// distance at which the count reaches r, and of the rows at that distance the first ones.
func (m *matrix) nearestCodes(q []float32, r int) []int {
	qc := make([]uint64, m.words)
	codeOf(q, m.center, qc)
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
