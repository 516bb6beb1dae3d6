//go:build !unix

package workspace

import "os"

// readText reads the file at path whole; a directory is reported as one.
func readText(path string) (text string, isDir bool, err error) {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return "", true, nil
	}
	b, err := os.ReadFile(path)
	return string(b), false, err
}
