package semindex

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
)

// realistic generates embedding-like vectors deterministically by row number, so a million of
// them need not be held to be searched exactly. Real embeddings are not isotropic Gaussians:
// they share a large mean direction (two unrelated texts have a cosine of 0.3-0.5 under most
// models), their variance is spread over a few hundred directions with a decaying spectrum, and
// texts come in topics and subtopics of very different sizes. So a vector here is the shared
// mean, plus its topic (Zipf-sized, on a power-law spectrum of latent directions), plus its
// subtopic, plus isotropic noise; a query is a new vector drawn the same way, not one of the
// rows.
type realistic struct {
	dim            int
	mean           []float32
	topics, subs   [][]float32
	subsPerTopic   int
	noise, subSize float64
}

func newRealistic(dim, rows int) *realistic {
	r := rand.New(rand.NewPCG(2026, 34))
	g := &realistic{dim: dim, subsPerTopic: 8, noise: 0.55, subSize: 0.35}
	gauss := func(s float64) []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(r.NormFloat64() * s / math.Sqrt(float64(dim)))
		}
		return v
	}
	g.mean = gauss(1)
	const latent = 96
	basis := make([][]float32, latent)
	for j := range basis {
		basis[j] = gauss(1)
	}
	nTopics := max(50, rows/200)
	g.topics = make([][]float32, nTopics)
	for t := range g.topics {
		v := make([]float32, dim)
		for j, b := range basis {
			a := float32(r.NormFloat64() * 0.9 / math.Sqrt(1+float64(j)))
			for i := range v {
				v[i] += a * b[i]
			}
		}
		g.topics[t] = v
	}
	g.subs = make([][]float32, nTopics*g.subsPerTopic)
	for s := range g.subs {
		g.subs[s] = gauss(g.subSize)
	}
	return g
}

// vector writes row i's vector into v (len dim), unnormalized as a model would return it.
func (g *realistic) vector(i uint64, v []float32) {
	r := rand.New(rand.NewPCG(i, 0x5e3))
	// Each row draws its topic from the Zipf law through its own generator.
	z := rand.NewZipf(r, 1.1, 4, uint64(len(g.topics)-1))
	t := int(z.Uint64())
	s := t*g.subsPerTopic + r.IntN(g.subsPerTopic)
	top, sub := g.topics[t], g.subs[s]
	sc := g.noise / math.Sqrt(float64(g.dim))
	for k := range v {
		v[k] = g.mean[k] + top[k] + sub[k] + float32(r.NormFloat64()*sc)
	}
}

// exactTop keeps the k best rows of one query by the float dot product.
type exactTop struct {
	k int
	h minHeap
}

func (e *exactTop) add(i int, s float32) {
	if len(e.h) < e.k {
		heap.Push(&e.h, scored{i, s})
	} else if s > e.h[0].score {
		e.h[0] = scored{i, s}
		heap.Fix(&e.h, 0)
	}
}

func (e *exactTop) rows() map[int]bool {
	out := map[int]bool{}
	for _, s := range e.h {
		out[s.i] = true
	}
	return out
}

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

func dotF(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// testCorpus is n realistic rows in an index's files (perFile chunks a file, rows numbered by
// their line numbers), their float16 rows in a vector file (in vecDir, or in memory for ""),
// coded against their mean as a build codes them, and, for each query, its exact top k over
// the float vectors, computed as the rows are made.
type testCorpus struct {
	m       *matrix
	queries [][]float32
	exact   []map[int]bool // by row number (chunk.start - 1)
	tenth   []float32      // each query's k-th best exact score
	files   map[string]*fileEntry
	gen     *realistic
}

func makeCorpus(n, dim, nq, k int, vecDir string) *testCorpus {
	g := newRealistic(dim, n)
	c := &testCorpus{files: map[string]*fileEntry{}, gen: g}
	for q := range nq {
		v := make([]float32, dim)
		g.vector(uint64(1<<40+q), v)
		normalize(v)
		c.queries = append(c.queries, v)
	}
	tops := make([]*exactTop, nq)
	for q := range tops {
		tops[q] = &exactTop{k: k}
	}
	index := ""
	if vecDir != "" {
		index = filepath.Join(vecDir, "corpus.bin")
	}
	vf, err := createVecFile(index)
	if err != nil {
		panic(err)
	}
	// First pass: the rows, their offsets, the centre.
	const perFile = 100
	var cen centre
	v := make([]float32, dim)
	var f *fileEntry
	batch := make([][]float32, 0, perFile)
	for i := range n {
		if i%perFile == 0 {
			f = &fileEntry{chunks: make([]chunk, 0, perFile)}
			c.files[fmt.Sprintf("f%07d.go", i/perFile)] = f
		}
		g.vector(uint64(i), v)
		normalize(v)
		for q, qv := range c.queries {
			tops[q].add(i, dotF(qv, v))
		}
		cen.add(v)
		f.chunks = append(f.chunks, chunk{start: i + 1, end: i + 1})
		batch = append(batch, append([]float32(nil), v...))
		if len(batch) == perFile || i == n-1 {
			offs, err := vf.appendRows(batch)
			if err != nil {
				panic(err)
			}
			for j := range batch {
				f.chunks[len(f.chunks)-len(batch)+j].off = offs[j]
			}
			batch = batch[:0]
		}
	}
	// Second pass, as recentre does: every row read back and coded against the mean.
	cen.v, cen.rows = cen.mean(), n
	words := codeWords(dim)
	buf := make([]byte, 2*dim)
	for _, f := range c.files {
		codes := make([]uint64, words*len(f.chunks))
		for j := range f.chunks {
			ch := &f.chunks[j]
			if err := vf.readRow(ch.off, buf, v); err != nil {
				panic(err)
			}
			ch.code = codes[j*words : (j+1)*words : (j+1)*words]
			codeOf(v, cen.v, ch.code)
		}
	}
	for _, t := range tops {
		c.exact = append(c.exact, t.rows())
		c.tenth = append(c.tenth, t.h[0].score)
	}
	c.m = buildMatrix(c.files, dim, cen.v, vf)
	return c
}

// recall is the mean share of each query's exact top k found in the index's top k.
func (c *testCorpus) recall(k int) float64 {
	var sum float64
	for q, qv := range c.queries {
		got := 0
		for _, s := range c.m.top(qv, k) {
			if c.exact[q][c.m.rows[s.i].c.start-1] {
				got++
			}
		}
		sum += float64(got) / float64(k)
	}
	return sum / float64(len(c.queries))
}

// recallWithin is recall as ann-benchmarks counts it: a hit is right when its exact score is
// within eps of the k-th best exact score (so a near-tie taken for the true k-th is not a miss).
func (c *testCorpus) recallWithin(k int, eps float32) float64 {
	var sum float64
	v := make([]float32, c.m.dim)
	for q, qv := range c.queries {
		got := 0
		for _, s := range c.m.top(qv, k) {
			c.gen.vector(uint64(c.m.rows[s.i].c.start-1), v)
			normalize(v)
			if dotF(qv, v) >= c.tenth[q]-eps {
				got++
			}
		}
		sum += float64(got) / float64(k)
	}
	return sum / float64(len(c.queries))
}

// meanCosine is the mean cosine of 1,000 pairs of unrelated rows: the distribution's spread.
func (c *testCorpus) meanCosine() float64 {
	a, b := make([]float32, c.m.dim), make([]float32, c.m.dim)
	var sum float64
	for i := range 1000 {
		c.gen.vector(uint64(i), a)
		c.gen.vector(uint64(1<<30+i), b)
		normalize(a)
		normalize(b)
		sum += float64(dotF(a, b))
	}
	return sum / 1000
}
