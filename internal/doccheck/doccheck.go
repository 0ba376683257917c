// Package doccheck finds exported names without a doc comment, for tests
// that keep a package's `go doc` complete.
package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Undocumented parses the non-test Go files of the package in dir and
// returns "file:line name" for every exported top-level type, function,
// method (on an exported type), constant, variable and struct field with no
// doc or line comment. A name in a documented const/var group counts as
// documented. It is not safe for concurrent use with writers of dir.
func Undocumented(dir string) ([]string, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []string
	miss := func(pos token.Pos, name string) {
		p := fset.Position(pos)
		out = append(out, filepath.Base(p.Filename)+":"+strconv.Itoa(p.Line)+" "+name)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || d.Doc != nil {
					continue
				}
				if d.Recv != nil && !exportedRecv(d.Recv) {
					continue
				}
				miss(d.Pos(), d.Name.Name)
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						if !sp.Name.IsExported() {
							continue
						}
						if d.Doc == nil && sp.Doc == nil && sp.Comment == nil {
							miss(sp.Pos(), sp.Name.Name)
						}
						if st, ok := sp.Type.(*ast.StructType); ok {
							for _, fl := range st.Fields.List {
								for _, n := range fl.Names {
									if n.IsExported() && fl.Doc == nil && fl.Comment == nil {
										miss(n.Pos(), sp.Name.Name+"."+n.Name)
									}
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							if n.IsExported() && d.Doc == nil && sp.Doc == nil && sp.Comment == nil {
								miss(n.Pos(), n.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

func exportedRecv(r *ast.FieldList) bool {
	if len(r.List) == 0 {
		return false
	}
	t := r.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

// Check fails t, listing every name Undocumented reports for the package in
// dir ("." for the calling test's own package).
func Check(t testing.TB, dir string) {
	t.Helper()
	missing, err := Undocumented(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) > 0 {
		t.Errorf("%d exported names without a doc comment:\n%s", len(missing), strings.Join(missing, "\n"))
	}
}
