package mpfile

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
)

// hashCache remembers files' SHA-256, keyed by path, size and mtime.
type hashCache struct {
	mu sync.Mutex
	m  map[string][sha256.Size]byte
}

// sum returns the SHA-256 of the file at path (key of the cache, with its
// size and mtime from fi), reading it from f.
func (h *hashCache) sum(path string, fi os.FileInfo, f io.ReaderAt) ([sha256.Size]byte, error) {
	key := fmt.Sprintf("%s|%d|%d", path, fi.Size(), fi.ModTime().UnixNano())
	h.mu.Lock()
	v, ok := h.m[key]
	h.mu.Unlock()
	if ok {
		return v, nil
	}
	d := sha256.New()
	if _, err := io.Copy(d, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return v, err
	}
	copy(v[:], d.Sum(nil))
	h.mu.Lock()
	if h.m == nil {
		h.m = map[string][sha256.Size]byte{}
	}
	h.m[key] = v
	h.mu.Unlock()
	return v, nil
}
