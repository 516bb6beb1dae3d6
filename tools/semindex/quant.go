package semindex

import (
	"errors"
	"math"
	"math/bits"
)

// How a vector is held. A model's vector (float32, normalized to unit length) is kept as int8
// with one float32 scale (dim + 4 bytes a chunk instead of dim × 4), which is what a search
// re-ranks with and what the index file stores. For the first pass of a search each vector also
// has a binary code: one bit a dimension, set where the vector is above the index's centre (the
// mean of its vectors; embeddings are not centred at zero, and the sign of an uncentred vector
// says little). Hamming distance between codes ranks the chunks roughly; the best few hundred
// are ranked again by their int8 vectors against the float query.

// quantize writes v (finite) as int8 into q (len(v)) and returns the scale: v[i] ≈ q[i]·scale.
func quantize(v []float32, q []int8) float32 {
	var m float32
	for _, x := range v {
		m = max(m, float32(math.Abs(float64(x))))
	}
	if m == 0 {
		clear(q)
		return 0
	}
	scale := m / 127
	inv := 1 / scale
	for i, x := range v {
		q[i] = int8(max(-127, min(127, math.Round(float64(x*inv)))))
	}
	return scale
}

// checkVector refuses what a model (or a proxy in front of one) should never return: an empty
// vector, a NaN or an infinity, which would rank every chunk at random.
func checkVector(v []float32) error {
	if len(v) == 0 {
		return errors.New("the embedding model returned an empty vector")
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return errors.New("the embedding model returned a vector with NaN or infinite values")
		}
	}
	return nil
}

// codeWords is the length in uint64 of a binary code of dim dimensions.
func codeWords(dim int) int { return (dim + 63) / 64 }

// codeOfInt8 writes the code of the int8 vector q (scale s) against center into code.
func codeOfInt8(q []int8, s float32, center []float32, code []uint64) {
	clear(code)
	for i, x := range q {
		if float32(x)*s > center[i] {
			code[i>>6] |= 1 << (uint(i) & 63)
		}
	}
}

// codeOfFloat writes the code of the float vector v against center into code.
func codeOfFloat(v []float32, center []float32, code []uint64) {
	clear(code)
	for i, x := range v {
		if x > center[i] {
			code[i>>6] |= 1 << (uint(i) & 63)
		}
	}
}

// hamming is the number of bits in which a and b (of one length) differ.
func hamming(a, b []uint64) int {
	b = b[:len(a)]
	d := 0
	for i := range a {
		d += bits.OnesCount64(a[i] ^ b[i])
	}
	return d
}

// dotInt8 is the inner product of the float query q with the int8 row r, unscaled.
func dotInt8(q []float32, r []int8) float32 {
	r = r[:len(q)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(r[i])
		s1 += q[i+1] * float32(r[i+1])
		s2 += q[i+2] * float32(r[i+2])
		s3 += q[i+3] * float32(r[i+3])
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(r[i])
	}
	return (s0 + s1) + (s2 + s3)
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

// dotF32 is the float inner product, unrolled by four.
func dotF32(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}
