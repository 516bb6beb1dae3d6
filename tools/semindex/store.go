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

// The file format, little-endian: the magic "agentd-semindex\x03", the number of files, then per
// file its path (uvarint length + bytes), its content hash (32 bytes), its stat (size uvarint,
// modification time varint ns, inode uvarint, change time varint ns; all 0 when not to be
// trusted), its number of chunks, and per chunk its first and last line (uvarints), its
// dimension (uvarint) and, when that is not 0, its scale (float32) and its vector (one int8 a
// dimension, the normalized vector divided by the scale). Binary codes are not stored: they
// depend on the whole index's centre and are made again at the first search.
//
// Versions 1 (no stat) and 2 (the stat, float32 vectors) are still read, their vectors
// quantized as they load; the next save writes version 3. A version 1 index's files are read
// once more (it has no stat), their vectors kept where the hash matches.
var (
	magic   = []byte("agentd-semindex\x03")
	magicV2 = []byte("agentd-semindex\x02")
	magicV1 = []byte("agentd-semindex\x01")
)

// maxDim bounds a stored vector's dimension: the largest embedding models give 4,096.
const maxDim = 1 << 16

func encode(w io.Writer, files []namedEntry) error {
	bw := bufio.NewWriter(w)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v uint64) { bw.Write(tmp[:binary.PutUvarint(tmp[:], v)]) }
	sv := func(v int64) { bw.Write(tmp[:binary.PutVarint(tmp[:], v)]) }
	bw.Write(magic)
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
		}
	}
	return bw.Flush()
}

var errFormat = errors.New("semindex: not an index file")

func load(file string) (map[string]*fileEntry, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return decodeFrom(bufio.NewReaderSize(f, 256<<10), st.Size())
}

func decode(data []byte) (map[string]*fileEntry, error) {
	return decodeFrom(bytes.NewReader(data), int64(len(data)))
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

func decodeFrom(src byteReader, size int64) (map[string]*fileEntry, error) {
	r := &reader{r: src, full: src, left: size}
	head := make([]byte, len(magic))
	r.read(head)
	if r.err != nil {
		return nil, errFormat
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
		return nil, errFormat
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
			return nil, r.err
		}
		f.chunks = make([]chunk, 0, nc)
		for range nc {
			start, end := r.uvarint(), r.uvarint()
			c := chunk{start: int(start), end: int(end)}
			dim := r.uv(1)
			if r.err != nil || dim > maxDim || start > math.MaxInt32 || end > math.MaxInt32 {
				return nil, errFormat
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
					}
				}
			}
			if r.err != nil {
				return nil, r.err
			}
			f.chunks = append(f.chunks, c)
		}
		files[string(pb)] = f
	}
	if r.err == nil && r.left != 0 {
		r.err = errFormat // bytes after the last file: not a file this code wrote
	}
	if r.err != nil {
		return nil, r.err
	}
	return files, nil
}

// grow returns b resized to n bytes, reallocated only when too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}
