package semindex

import (
	"errors"
	"math"
	"math/bits"
)

// How a vector is held. A model's vector, normalized to unit length, is written to the vector
// file as float16 (vecfile.go) and kept in memory only as its binary code: one bit a dimension,
// set where the vector is above the index's centre (the mean of its vectors; embeddings are not
// centred at zero, and the sign of an uncentred vector says little). Hamming distance between
// codes ranks every chunk roughly; the nearest few hundred are read back and ranked by their
// float16 rows against the float query.

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

// codeOf writes the code of v against center into code.
func codeOf(v []float32, center []float32, code []uint64) {
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
