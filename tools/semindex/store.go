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
// (vecfile.go; 16 bytes, all 0 when there is none), the number of files, then per
// file its path (uvarint length + bytes), its content hash (32 bytes), its stat (size uvarint,
// modification time varint ns, inode uvarint, change time varint ns; all 0 when not to be
// trusted), its number of chunks, and per chunk its first and last line (uvarints), its
// dimension (uvarint) and, when that is not 0, its scale (float32), its vector (one int8 a
// dimension, the normalized vector divided by the scale) and the offset of its float16 row in
// the vector file (uvarint, 0 for none). Binary codes are not stored: they depend on the whole
// index's centre and are made again at the first search.
//
// Versions 1 (no stat) and 2 (the stat, float32 vectors) are still read, their vectors
// quantized as they load and written to a new vector file; the next save writes version 3. A version 1 index's files are read
// once more (it has no stat), their vectors kept where the hash matches.
var (
	magic   = []byte("agentd-semindex\x03")
	magicV2 = []byte("agentd-semindex\x02")
	magicV1 = []byte("agentd-semindex\x01")
)

// maxDim bounds a stored vector's dimension: the largest embedding models give 4,096.
const maxDim = 1 << 16

func encode(w io.Writer, vecID [16]byte, files []namedEntry) error {
	bw := bufio.NewWriter(w)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	sv := func(v int64) { bw.Write(tmp[:binary.PutVarint(tmp[:], v)]) }
	bw.Write(magic)
	bw.Write(vecID[:])
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
			uv(uint64(len(c.q)))
			if len(c.q) == 0 {
				continue
			}
			binary.LittleEndian.PutUint32(tmp[:4], math.Float32bits(c.scale))
			bw.Write(tmp[:4])
			for _, x := range c.q {
				bw.WriteByte(byte(x))
			}
			uv(uint64(c.off))
		}
	}
	return bw.Flush()
}

var errFormat = errors.New("semindex: not an index file")

// load reads the index file and opens its vector file (file + ".vec"); the vectors of an
// index of format 1 or 2 are written to a new one as they load (old says so: the index is to
// be saved in format 3, which names it). Without the vector file the
// index is still good: its chunks lose their rows (off 0) and rank by int8.
func load(file string) (map[string]*fileEntry, *vecFile, bool, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, false, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, false, err
	}
	var vec *vecFile
	keep := func(v []float32) int64 {
		if vec == nil {
			if vec, err = createVecFile(file + ".vec"); err != nil {
				vec = nil
				return 0
			}
		}
		offs, err := vec.appendRows([][]float32{v})
		if err != nil {
			return 0
		}
		return offs[0]
	}
	files, id, err := decodeFrom(bufio.NewReaderSize(f, 256<<10), st.Size(), keep)
	if err != nil {
		if vec != nil {
			vec.f.Close()
		}
		return nil, nil, false, err
	}
	old := id == [16]byte{} && vec != nil // format 1 or 2, its vectors moved to a new file
	if vec == nil && id != ([16]byte{}) {
		vec, _ = openVecFile(file+".vec", id)
	}
	if vec == nil {
		// No vector file, or not this index's: no row offset is good.
		for _, fe := range files {
			for i := range fe.chunks {
				fe.chunks[i].off = 0
			}
		}
	}
	return files, vec, old, nil
}

func decode(data []byte) (map[string]*fileEntry, error) {
	files, _, err := decodeFrom(bytes.NewReader(data), int64(len(data)), nil)
	return files, err
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

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(r)
	if err != nil {
		r.err = errFormat
	}
	return v
}

type byteReader interface {
	io.Reader
	io.ByteReader
}

// decodeFrom reads an index of size bytes from src and the id of its vector file; keep, if not
// nil, stores a float vector of a format 1 or 2 index and returns its row's offset.
func decodeFrom(src byteReader, size int64, keep func([]float32) int64) (map[string]*fileEntry, [16]byte, error) {
	var id [16]byte
	r := &reader{r: src, full: src, left: size}
	head := make([]byte, len(magic))
	r.read(head)
	if r.err != nil {
		return nil, id, errFormat
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
		return nil, id, errFormat
	}
	if version == 3 {
		r.read(id[:])
	}
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
			f.stat.size = int64(r.uvarint())
			f.stat.mtime = r.varint()
			f.stat.ino = r.uvarint()
			f.stat.ctime = r.varint()
		}
		nc := r.uv(3)
		if r.err != nil {
			return nil, id, r.err
		}
		f.chunks = make([]chunk, 0, nc)
		for range nc {
			start, end := r.uvarint(), r.uvarint()
			c := chunk{start: int(start), end: int(end)}
			dim := r.uv(1)
			if r.err != nil || dim > maxDim || start > math.MaxInt32 || end > math.MaxInt32 {
				return nil, id, errFormat
			}
			if dim > 0 {
				if version == 3 {
					var sb [4]byte
					r.read(sb[:])
					c.scale = math.Float32frombits(binary.LittleEndian.Uint32(sb[:]))
					raw = grow(raw, dim)
					r.read(raw)
					c.q = make([]int8, dim)
					for i, b := range raw {
						c.q[i] = int8(b)
					}
					if off := r.uvarint(); off > math.MaxInt64/2 {
						r.err = errFormat
					} else {
						c.off = int64(off)
					}
					if math.IsNaN(float64(c.scale)) || math.IsInf(float64(c.scale), 0) {
						r.err = errFormat
					}
				} else {
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
					} else {
						c.q = make([]int8, dim)
						c.scale = quantize(v, c.q)
						if keep != nil {
							c.off = keep(v)
						}
					}
				}
			}
			if r.err != nil {
				return nil, id, r.err
			}
			f.chunks = append(f.chunks, c)
		}
		files[string(pb)] = f
	}
	if r.err == nil && r.left != 0 {
		r.err = errFormat // bytes after the last file: not a file this code wrote
	}
	if r.err != nil {
		return nil, id, r.err
	}
	return files, id, nil
}

// grow returns b resized to n bytes, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
