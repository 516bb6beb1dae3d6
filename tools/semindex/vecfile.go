package semindex

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"io"
	"os"

	"github.com/x448/float16"
)

// The vector file (the index file's name + ".vec") keeps every chunk's normalized vector as
// float16, appended as chunks are embedded, for the last step of a search: the best few of the
// int8 re-rank are scored again from it, which int8's rounding cannot tell apart between
// near-ties (float16 holds a unit vector's components to about 1e-5; int8 to about 5e-4). It is
// read a row at a time (a pread each), never held in memory. Its header is a magic and a random
// id that the index file names: a vector file that is not the one the index was saved with
// (a crash between the two writes, a copy) is not read, and the index ranks by int8 alone until
// its chunks are embedded again. Rows of files embedded again are dead; a save rewrites the
// file with the live rows only once they are under half of it.
var vecMagic = []byte("agentd-semvec\x00\x00\x01")

const vecHeader = 32 // magic and id

type vecFile struct {
	f    *os.File
	id   [16]byte
	size int64 // where the next row goes
}

// openVecFile opens the vector file at path if its id is id.
func openVecFile(path string, id [16]byte) (*vecFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	var head [vecHeader]byte
	st, err := f.Stat()
	if err == nil {
		_, err = f.ReadAt(head[:], 0)
	}
	if err != nil || !bytes.Equal(head[:16], vecMagic) || !bytes.Equal(head[16:], id[:]) {
		f.Close()
		return nil, errors.New("semindex: the vector file is not the index's")
	}
	return &vecFile{f: f, id: id, size: st.Size()}, nil
}

// createVecFile writes a new, empty vector file at path (over any there) with a new id.
func createVecFile(path string) (*vecFile, error) {
	v := &vecFile{size: vecHeader}
	if _, err := rand.Read(v.id[:]); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(append(append([]byte{}, vecMagic...), v.id[:]...)); err != nil {
		f.Close()
		return nil, err
	}
	v.f = f
	return v, nil
}

// appendRows writes the rows (of one dimension) at the end in one write and returns each one's
// offset.
func (v *vecFile) appendRows(rows [][]float32) ([]int64, error) {
	if len(rows) == 0 {
		return nil, nil
	}
	dim := len(rows[0])
	buf := make([]byte, 2*dim*len(rows))
	offs := make([]int64, len(rows))
	for i, r := range rows {
		putRow(buf[2*dim*i:], r)
		offs[i] = v.size + int64(2*dim*i)
	}
	if _, err := v.f.WriteAt(buf, v.size); err != nil {
		return nil, err
	}
	v.size += int64(len(buf))
	return offs, nil
}

func putRow(b []byte, r []float32) {
	for j, x := range r {
		binary.LittleEndian.PutUint16(b[2*j:], float16.Fromfloat32(x).Bits())
	}
}

// readRow reads the row of len(out) dimensions at off into out; buf is scratch of 2·len(out).
func (v *vecFile) readRow(off int64, buf []byte, out []float32) error {
	if off < vecHeader || off+int64(len(buf)) > v.size {
		return io.ErrUnexpectedEOF
	}
	if _, err := v.f.ReadAt(buf, off); err != nil {
		return err
	}
	for j := range out {
		out[j] = float16.Frombits(binary.LittleEndian.Uint16(buf[2*j:])).Float32()
	}
	return nil
}
