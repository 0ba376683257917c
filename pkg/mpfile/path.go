package mpfile

import (
	"errors"
	"strings"
)

// errBadPath is returned by checkPath for a name the servers refuse.
var errBadPath = errors.New("bad file name")

// checkPath is Files's path rule. p is a
// slash-separated path relative to the served directory ("" or "/" names
// the directory itself; one leading and one trailing slash are allowed).
// Refused: NUL bytes, backslashes, empty components ("a//b"), and any
// component starting with '.', which covers "..", "." and hidden files
// such as ".git" or ".hidden-secret". The result is the path as os.Root
// and io/fs expect it ("." for the directory itself). Files are opened
// through an os.Root of the directory, so a symbolic link cannot lead out
// of it either.
func checkPath(p string) (string, error) {
	if strings.ContainsAny(p, "\x00\\") {
		return "", errBadPath
	}
	if p == "" || p == "/" {
		return ".", nil
	}
	p = strings.TrimPrefix(p, "/")
	p = strings.TrimSuffix(p, "/")
	for _, c := range strings.Split(p, "/") {
		if c == "" || c[0] == '.' {
			return "", errBadPath
		}
	}
	return p, nil
}
