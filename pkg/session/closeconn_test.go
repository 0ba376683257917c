package session

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// Issue 30, what to build, item 5: "Every path close goes through one
// function." No function of the package but closeConn calls a
// connection's CloseWithError; the package's own code ends a session
// through closeLocked and fail, never through its public CloseWithError.
func TestConnClosesInOneFunction(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	n := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			ast.Inspect(fd.Body, func(x ast.Node) bool {
				call, ok := x.(*ast.CallExpr)
				if !ok {
					return true
				}
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "CloseWithError" {
					if fd.Name.Name == "closeConn" {
						n++
					} else {
						t.Errorf("%v: %s closes a connection itself; go through closeConn", fset.Position(call.Pos()), fd.Name.Name)
					}
				}
				return true
			})
		}
	}
	if n != 1 {
		t.Errorf("closeConn calls CloseWithError %d times, want 1", n)
	}
}

// closeConn cuts a long reason at a UTF-8 boundary, and never an
// application's close, which closeerr.go has cut to maxCloseReason already.
func TestCutReason(t *testing.T) {
	long := strings.Repeat("é", maxConnReason) // 2 bytes per rune
	for _, c := range []struct {
		name string
		in   string
		n    int
		want int // bytes kept
	}{
		{"short", "path removed", maxConnReason, len("path removed")},
		{"ASCII, cut at the limit", strings.Repeat("x", 2*maxConnReason), maxConnReason, maxConnReason},
		{"a rune across the cut", "x" + long, maxConnReason, maxConnReason - 1},
		{"a rune ending at the cut", long, maxConnReason, maxConnReason},
		{"not UTF-8", strings.Repeat("\x80", 2*maxConnReason), maxConnReason, maxConnReason},
	} {
		got := cutReason(c.in, c.n)
		if len(got) != c.want || !strings.HasPrefix(c.in, got) {
			t.Errorf("%s: kept %d bytes, want the first %d", c.name, len(got), c.want)
		}
		if utf8.ValidString(c.in) && !utf8.ValidString(got) {
			t.Errorf("%s: cut inside a rune", c.name)
		}
	}
	longest := appCloseReason(&ApplicationError{Code: 1<<62 - 1, Reason: long})
	if got := cutReason(longest, maxConnReason); got != longest {
		t.Errorf("an application's close of %d bytes cut to %d", len(longest), len(got))
	}
}
