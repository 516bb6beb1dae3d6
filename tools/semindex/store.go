package semindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
)

// The file format, little-endian: the magic "agentd-semindex\x02", the number of files, then per
// file its path (uvarint length + bytes), its content hash (32 bytes), its stat (size uvarint,
// modification time varint ns, inode uvarint, change time varint ns; all 0 when not to be
// trusted), its number of chunks, and per chunk its first and last line (uvarints), its
// dimension (uvarint) and its vector (float32 each). Vectors are stored normalized, as they are
// searched. Version 1, without the stat, is still read: its files are read once more, their
// vectors kept where the hash matches.
var (
	magic   = []byte("agentd-semindex\x02")
	magicV1 = []byte("agentd-semindex\x01")
)

func encode(files map[string]*fileEntry) []byte {
	var b bytes.Buffer
	b.Write(magic)
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v int) { b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(v))]) }
	uv(len(files))
	for _, p := range sortedKeys(files) {
		f := files[p]
		uv(len(p))
		b.WriteString(p)
		b.Write(f.hash[:])
		uv(int(f.stat.size))
		b.Write(tmp[:binary.PutVarint(tmp[:], f.stat.mtime)])
		b.Write(tmp[:binary.PutUvarint(tmp[:], f.stat.ino)])
		b.Write(tmp[:binary.PutVarint(tmp[:], f.stat.ctime)])
		uv(len(f.chunks))
		for _, c := range f.chunks {
			uv(c.start)
			uv(c.end)
			uv(len(c.vec))
			var fb [4]byte
			for _, x := range c.vec {
				binary.LittleEndian.PutUint32(fb[:], math.Float32bits(x))
				b.Write(fb[:])
			}
		}
	}
	return b.Bytes()
}

var errFormat = errors.New("semindex: not an index file")

func load(file string) (map[string]*fileEntry, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return decode(data)
}

func decode(data []byte) (map[string]*fileEntry, error) {
	withStat := bytes.HasPrefix(data, magic)
	if !withStat && !bytes.HasPrefix(data, magicV1) {
		return nil, errFormat
	}
	r := bytes.NewReader(data[len(magic):])
	uv := func() (int, error) {
		v, err := binary.ReadUvarint(r)
		if err != nil || v > uint64(len(data)) {
			return 0, errFormat
		}
		return int(v), nil
	}
	n, err := uv()
	if err != nil {
		return nil, err
	}
	files := make(map[string]*fileEntry, min(n, 1<<16))
	for range n {
		pl, err := uv()
		if err != nil || pl > r.Len() {
			return nil, errFormat
		}
		pb := make([]byte, pl)
		r.Read(pb)
		f := &fileEntry{}
		if _, err := r.Read(f.hash[:]); err != nil {
			return nil, errFormat
		}
		if withStat {
			size, e1 := binary.ReadUvarint(r)
			mtime, e2 := binary.ReadVarint(r)
			ino, e3 := binary.ReadUvarint(r)
			ctime, e4 := binary.ReadVarint(r)
			if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
				return nil, errFormat
			}
			f.stat = fileStat{size: int64(size), mtime: mtime, ino: ino, ctime: ctime}
		}
		nc, err := uv()
		if err != nil {
			return nil, err
		}
		for range nc {
			start, e1 := uv()
			end, e2 := uv()
			dim, e3 := uv()
			if e1 != nil || e2 != nil || e3 != nil || dim*4 > r.Len() {
				return nil, errFormat
			}
			vec := make([]float32, dim)
			var fb [4]byte
			for i := range vec {
				r.Read(fb[:])
				vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(fb[:]))
			}
			f.chunks = append(f.chunks, chunk{start: start, end: end, vec: vec})
		}
		files[string(pb)] = f
	}
	return files, nil
}
