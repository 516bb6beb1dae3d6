package semindex

import (
	"bytes"
	"encoding/binary"
	"math"
)

// legacyVectors are the float32 vectors of files as index formats 1 and 2 stored them.
type legacyFile struct {
	path   string
	hash   [32]byte
	stat   fileStat
	chunks []legacyChunk
}

type legacyChunk struct {
	start, end int
	vec        []float32
}

// encodeLegacy writes files in format 2 (withStat) or 1, as the code before format 3 did.
func encodeLegacy(files []legacyFile, withStat bool) []byte {
	var b bytes.Buffer
	if withStat {
		b.Write(magicV2)
	} else {
		b.Write(magicV1)
	}
	var tmp [binary.MaxVarintLen64]byte
	uv := func(v int) { b.Write(tmp[:binary.PutUvarint(tmp[:], uint64(v))]) }
	uv(len(files))
	for _, f := range files {
		uv(len(f.path))
		b.WriteString(f.path)
		b.Write(f.hash[:])
		if withStat {
			uv(int(f.stat.size))
			b.Write(tmp[:binary.PutVarint(tmp[:], f.stat.mtime)])
			b.Write(tmp[:binary.PutUvarint(tmp[:], f.stat.ino)])
			b.Write(tmp[:binary.PutVarint(tmp[:], f.stat.ctime)])
		}
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

// asLegacy is the index's files with their vectors back in float32 (read from its vector file).
func asLegacy(ix *Index) []legacyFile {
	var out []legacyFile
	buf := make([]byte, 2*ix.dim)
	for p, f := range ix.files {
		lf := legacyFile{path: p, hash: f.hash, stat: f.stat}
		for _, c := range f.chunks {
			v := make([]float32, ix.dim)
			if err := ix.vec.readRow(c.off, buf, v); err != nil {
				panic(err)
			}
			normalize(v)
			lf.chunks = append(lf.chunks, legacyChunk{c.start, c.end, v})
		}
		out = append(out, lf)
	}
	return out
}
