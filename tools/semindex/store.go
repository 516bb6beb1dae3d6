package semindex

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
)

// The file format, little-endian: the magic "agentd-semindex\x03", the id of the vector file
// (vecfile.go; 16 bytes, all 0 when there is none), the vectors' dimension (uvarint; 0 for
// none yet), the centre's count of vectors summed and its rows when set (uvarints) and, when
// the dimension is not 0, its running sum (float64 each) and the centre itself (float32 each);
// then the number of files, and per file its path (uvarint length + bytes), its content hash
// (32 bytes), its stat (size uvarint, modification time varint ns, inode uvarint, change time
// varint ns; all 0 when not to be trusted), its number of chunks, and per chunk its first and
// last line and the offset of its float16 row in the vector file (uvarints; offset 0 for no
// vector), then, for a chunk with a vector, its binary code (dim/64 rounded up uint64s).
//
// Versions 1 (no stat) and 2 (the stat, float32 vectors in the index) are still read: their
// vectors are written to a new vector file as they load, the centre is their mean, and the
// index is saved once in version 3.
var (
	magic   = []byte("agentd-semindex\x03")
	magicV2 = []byte("agentd-semindex\x02")
	magicV1 = []byte("agentd-semindex\x01")
)

// maxDim bounds a stored vector's dimension: the largest embedding models give 4,096.
const maxDim = 1 << 16

// header is what the index file holds besides its files.
type header struct {
	vecID [16]byte
	dim   int
	cen   centre
}

func encode(w io.Writer, h header, files []namedEntry) error {
	bw := bufio.NewWriter(w)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	sv := func(v int64) { bw.Write(tmp[:binary.PutVarint(tmp[:], v)]) }
	u64 := func(v uint64) { binary.LittleEndian.PutUint64(tmp[:8], v); bw.Write(tmp[:8]) }
	bw.Write(magic)
	bw.Write(h.vecID[:])
	uv(uint64(h.dim))
	uv(uint64(h.cen.n))
	uv(uint64(h.cen.rows))
	if h.dim > 0 {
		for i := range h.dim {
			var s float64
			if i < len(h.cen.sum) {
				s = h.cen.sum[i]
			}
			u64(math.Float64bits(s))
		}
		for i := range h.dim {
			var c float32
			if i < len(h.cen.v) {
				c = h.cen.v[i]
			}
			binary.LittleEndian.PutUint32(tmp[:4], math.Float32bits(c))
			bw.Write(tmp[:4])
		}
	}
	words := codeWords(h.dim)
	uv(uint64(len(files)))
	for _, e := range files {
		f := e.f
		uv(uint64(len(e.path)))
		bw.WriteString(e.path)
		bw.Write(f.hash[:])
		uv(uint64(f.stat.size))
		sv(f.stat.mtime)
		uv(f.stat.ino)
		sv(f.stat.ctime)
		uv(uint64(len(f.chunks)))
		for _, c := range f.chunks {
			uv(uint64(c.start))
			uv(uint64(c.end))
			if len(c.code) != words || h.dim == 0 {
				uv(0)
				continue
			}
			uv(uint64(c.off))
			for _, w := range c.code {
				u64(w)
			}
		}
	}
	return bw.Flush()
}

var errFormat = errors.New("semindex: not an index file")

// loaded is an index read from its file, with its vector file open.
type loaded struct {
	files map[string]*fileEntry
	vec   *vecFile
	dim   int
	cen   centre
	old   bool // to be saved: format 1 or 2, or files dropped
}

// load reads the index file and opens its vector file. An index whose vector file is missing or
// not its own is refused (its vectors are gone; the files are embedded again); one of format 1
// or 2 moves its vectors to a new vector file.
func load(file string) (*loaded, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var legacy [][]float32
	var legacyChunks []*chunk
	keep := func(c *chunk, v []float32) {
		legacy = append(legacy, append([]float32(nil), v...))
		legacyChunks = append(legacyChunks, c)
	}
	h, files, version, err := decodeFrom(bufio.NewReaderSize(f, 256<<10), st.Size(), keep)
	if err != nil {
		return nil, err
	}
	l := &loaded{files: files, dim: h.dim, cen: h.cen}
	if version == 3 {
		if h.dim == 0 {
			return l, nil
		}
		if l.vec, err = openVecFile(file, h.vecID); err != nil {
			return nil, err
		}
		// A vector file cut short (a full disk, a crash before its rows reached it) lost the
		// rows past its end: their files are dropped, so the next build embeds them again.
		for p, fe := range l.files {
			for _, c := range fe.chunks {
				if c.code != nil && c.off+int64(2*h.dim) > l.vec.size {
					delete(l.files, p)
					l.old = true
					break
				}
			}
		}
		return l, nil
	}
	// Format 1 or 2: the vectors to a new vector file, coded against their mean. (The chunk
	// pointers stay good: each file's chunks were appended before the next file began.)
	l.old = true
	if len(legacy) == 0 {
		return l, nil
	}
	l.dim = len(legacy[0])
	for _, v := range legacy {
		if len(v) != l.dim {
			return nil, errFormat
		}
		l.cen.add(v)
	}
	l.cen.v, l.cen.rows = l.cen.mean(), len(legacy)
	if l.vec, err = createVecFile(file); err != nil {
		return nil, err
	}
	offs, err := l.vec.appendRows(legacy)
	if err != nil {
		l.vec.f.Close()
		os.Remove(l.vec.path)
		return nil, err
	}
	words := codeWords(l.dim)
	codes := make([]uint64, words*len(legacy))
	for i, c := range legacyChunks {
		c.off, c.code = offs[i], codes[i*words:(i+1)*words:(i+1)*words]
		codeOf(legacy[i], l.cen.v, c.code)
	}
	return l, nil
}

func decode(data []byte) (header, map[string]*fileEntry, error) {
	h, files, _, err := decodeFrom(bytes.NewReader(data), int64(len(data)), nil)
	return h, files, err
}

// reader reads a stream of size bytes, counting what is left, so that no count read from it
// is believed beyond what the rest of the stream could hold.
type reader struct {
	r    io.ByteReader
	full io.Reader
	left int64
	err  error
}

func (r *reader) ReadByte() (byte, error) {
	if r.left <= 0 {
		return 0, errFormat
	}
	b, err := r.r.ReadByte()
	if err != nil {
		return 0, errFormat
	}
	r.left--
	return b, nil
}

// uv reads a uvarint no larger than what is left of the stream divided by per (the bytes each
// counted item takes at least).
func (r *reader) uv(per int64) int {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r)
	if err != nil || v > uint64(r.left)/uint64(per) {
		r.err = errFormat
		return 0
	}
	return int(v)
}

func (r *reader) read(b []byte) {
	if r.err != nil {
		return
	}
	if int64(len(b)) > r.left {
		r.err = errFormat
		return
	}
	if _, err := io.ReadFull(r.full, b); err != nil {
		r.err = errFormat
		return
	}
	r.left -= int64(len(b))
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadVarint(r)
	if err != nil {
		r.err = errFormat
	}
	return v
}

// uvarint reads a uvarint of at most limit.
func (r *reader) uvarint(limit uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r)
	if err != nil || v > limit {
		r.err = errFormat
	}
	return v
}

func (r *reader) u64() uint64 {
	var b [8]byte
	r.read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

func (r *reader) f32() float32 {
	var b [4]byte
	r.read(b[:])
	return math.Float32frombits(binary.LittleEndian.Uint32(b[:]))
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// decodeFrom reads an index of size bytes from src; keep, if not nil, takes the float vectors
// of a format 1 or 2 index, one a chunk.
func decodeFrom(src byteReader, size int64, keep func(*chunk, []float32)) (header, map[string]*fileEntry, int, error) {
	var h header
	r := &reader{r: src, full: src, left: size}
	head := make([]byte, len(magic))
	r.read(head)
	if r.err != nil {
		return h, nil, 0, errFormat
	}
	version := 0
	switch {
	case bytes.Equal(head, magic):
		version = 3
	case bytes.Equal(head, magicV2):
		version = 2
	case bytes.Equal(head, magicV1):
		version = 1
	default:
		return h, nil, 0, errFormat
	}
	if version == 3 {
		r.read(h.vecID[:])
		h.dim = r.uv(12) // the centre takes 12 bytes a dimension
		h.cen.n = int(r.uvarint(math.MaxInt32))
		h.cen.rows = int(r.uvarint(math.MaxInt32))
		if r.err == nil && (h.dim > maxDim) {
			r.err = errFormat
		}
		if h.dim > 0 && r.err == nil {
			h.cen.sum = make([]float64, h.dim)
			for i := range h.cen.sum {
				if h.cen.sum[i] = math.Float64frombits(r.u64()); !finite(h.cen.sum[i]) {
					r.err = errFormat
				}
			}
			h.cen.v = make([]float32, h.dim)
			for i := range h.cen.v {
				if h.cen.v[i] = r.f32(); !finite(float64(h.cen.v[i])) {
					r.err = errFormat
				}
			}
		}
	}
	words := codeWords(h.dim)
	n := r.uv(32 + 2) // a file takes at least its hash, its path's length and its chunk count
	files := make(map[string]*fileEntry, min(n, 1<<16))
	var raw []byte
	var fv []float32
	for range n {
		pb := make([]byte, r.uv(1))
		r.read(pb)
		f := &fileEntry{}
		r.read(f.hash[:])
		if version >= 2 {
			f.stat.size = int64(r.uvarint(math.MaxInt64))
			f.stat.mtime = r.varint()
			f.stat.ino = r.uvarint(math.MaxUint64)
			f.stat.ctime = r.varint()
		}
		nc := r.uv(3)
		if r.err != nil {
			return h, nil, 0, r.err
		}
		f.chunks = make([]chunk, 0, nc)
		var codes []uint64
		for range nc {
			c := chunk{start: int(r.uvarint(math.MaxInt32)), end: int(r.uvarint(math.MaxInt32))}
			if version == 3 {
				c.off = int64(r.uvarint(math.MaxInt64 / 2))
				if c.off != 0 {
					if h.dim == 0 || c.off < vecHeader || int64(words*8) > r.left {
						r.err = errFormat
					} else {
						if len(codes) < words {
							codes = make([]uint64, words*max(1, nc))
						}
						c.code, codes = codes[:words:words], codes[words:]
						for i := range c.code {
							c.code[i] = r.u64()
						}
					}
				}
			} else {
				dim := r.uv(4)
				if r.err == nil && dim > maxDim {
					r.err = errFormat
				}
				if dim > 0 && r.err == nil {
					raw = grow(raw, 4*dim)
					r.read(raw)
					if len(fv) < dim {
						fv = make([]float32, dim)
					}
					v := fv[:dim]
					for i := range v {
						v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
					}
					if checkVector(v) != nil {
						r.err = errFormat
					}
					if r.err == nil {
						f.chunks = append(f.chunks, c)
						if keep != nil {
							normalize(v)
							keep(&f.chunks[len(f.chunks)-1], v)
						}
						continue
					}
				}
			}
			if r.err != nil {
				return h, nil, 0, r.err
			}
			f.chunks = append(f.chunks, c)
		}
		files[string(pb)] = f
	}
	if r.err == nil && r.left != 0 {
		r.err = errFormat // bytes after the last file: not a file this code wrote
	}
	if r.err != nil {
		return h, nil, 0, r.err
	}
	return h, files, version, nil
}

// grow returns b resized to n bytes, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
