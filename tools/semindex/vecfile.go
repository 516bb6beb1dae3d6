package semindex

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/x448/float16"
)

// The vector file keeps every chunk's normalized vector as float16 (2 bytes a dimension; a unit
// vector's components to about 1e-5), appended as chunks are embedded and read a row at a time
// (a pread each) by a search's re-rank; it is never held in memory, which holds only the binary
// codes. Its name is the index file's with ".vec-" and the first 12 hex digits of a random id
// the index file records, and its header is a magic and that whole id: the index reads only the
// vector file it was saved with. Rows of files embedded again are dead; a save rewrites the
// live rows into a new file (a new id, so a new name) once they are under half of it, writes
// the index naming it, and only then removes the old one, so a crash at any point leaves an
// index and its own vector file. An index without a file keeps its rows in memory (memRows).
var vecMagic = []byte("agentd-semvec\x00\x00\x02")

const vecHeader = 32 // magic and id

type rowFile interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
}

type vecFile struct {
	f    rowFile
	path string // "" in memory
	id   [16]byte
	size int64 // where the next row goes
}

func vecPath(index string, id [16]byte) string {
	return index + ".vec-" + hex.EncodeToString(id[:6])
}

// openVecFile opens the vector file of the index file index saved with id.
func openVecFile(index string, id [16]byte) (*vecFile, error) {
	path := vecPath(index, id)
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
	return &vecFile{f: f, path: path, id: id, size: st.Size()}, nil
}

// createVecFile writes a new, empty vector file for the index file index, with a new id; index
// "" makes one in memory.
func createVecFile(index string) (*vecFile, error) {
	v := &vecFile{size: vecHeader}
	if _, err := rand.Read(v.id[:]); err != nil {
		return nil, err
	}
	head := append(append([]byte{}, vecMagic...), v.id[:]...)
	if index == "" {
		v.f = &memRows{b: head}
		return v, nil
	}
	v.path = vecPath(index, v.id)
	f, err := os.OpenFile(v.path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(head); err != nil {
		f.Close()
		os.Remove(v.path)
		return nil, err
	}
	v.f = f
	return v, nil
}

// removeOtherVecFiles removes the vector files of index other than keep's (left by a
// compaction or a crash).
func removeOtherVecFiles(index string, keep *vecFile) {
	matches, _ := filepath.Glob(index + ".vec-*")
	for _, m := range matches {
		if (keep == nil || m != keep.path) && !strings.ContainsAny(m[len(index):], "/\\") {
			os.Remove(m)
		}
	}
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

// memRows is a vector file in memory, for an index without a file.
type memRows struct {
	mu sync.RWMutex
	b  []byte
}

func (m *memRows) ReadAt(p []byte, off int64) (int, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if off < 0 || off+int64(len(p)) > int64(len(m.b)) {
		return 0, io.ErrUnexpectedEOF
	}
	return copy(p, m.b[off:]), nil
}

func (m *memRows) WriteAt(p []byte, off int64) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	return copy(m.b[off:], p), nil
}

func (m *memRows) Close() error { return nil }
