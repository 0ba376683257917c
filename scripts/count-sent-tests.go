//go:build ignore

// count-sent-tests counts the Test functions of a package's *_test.go files
// and how many of them assert what the session sends (issue 30): those that
// reach, directly or through helpers declared in the test files, one of the
// scripted peer's checks (harness_test.go: a testSession's want*, drain or
// readFrame, or wantFrameType) on a harness session (newTestSession,
// newTestClient...); those that watch the send tap instead (sendTap,
// startCapture); and those that parse what the session framed for its peer
// without a network (stream_credit_test.go's scriptedPeer.sentFrames,
// stream_prio_test.go's parseRecords). Names are resolved as a reader would: a function, a
// package variable, or for x.m any method m of the test files.
//
// Usage: go run scripts/count-sent-tests.go [-v] [dir]  (default pkg/session)
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// decl is a function or method of the test files and what it calls.
type decl struct {
	file  string
	calls []string // names it uses: "f" for a function or variable, ".m" for any method m
	tap   bool     // assigns sendTap
	skip  bool     // its first statement is t.Skip(...)
}

func main() {
	verbose := flag.Bool("v", false, "list each Test function with its verdict")
	flag.Parse()
	dir := "pkg/session"
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		fmt.Fprintln(os.Stderr, "no test files in", dir)
		os.Exit(1)
	}
	fset := token.NewFileSet()
	decls := map[string][]*decl{} // "f" or ".m" -> declarations
	var tests []string
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.VAR { // tables of helpers
				for _, sp := range gd.Specs {
					vs := sp.(*ast.ValueSpec)
					x := &decl{file: filepath.Base(name)}
					ast.Inspect(vs, func(n ast.Node) bool {
						if id, ok := n.(*ast.Ident); ok {
							x.calls = append(x.calls, id.Name)
						}
						return true
					})
					for _, id := range vs.Names {
						decls[id.Name] = append(decls[id.Name], x)
					}
				}
				continue
			}
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			key := fd.Name.Name
			if fd.Recv != nil {
				key = recvType(fd.Recv.List[0].Type) + "." + key
			} else if strings.HasPrefix(key, "Test") && key != "TestMain" {
				tests = append(tests, key)
			}
			x := &decl{file: filepath.Base(name)}
			if len(fd.Body.List) > 0 {
				if es, ok := fd.Body.List[0].(*ast.ExprStmt); ok {
					if c, ok := es.X.(*ast.CallExpr); ok {
						if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Skip" {
							x.skip = true
						}
					}
				}
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident: // a call, or a function passed on (harnessSides' new)
					x.calls = append(x.calls, n.Name)
				case *ast.SelectorExpr:
					x.calls = append(x.calls, "."+n.Sel.Name)
				case *ast.AssignStmt:
					for _, l := range n.Lhs {
						if id, ok := l.(*ast.Ident); ok && id.Name == "sendTap" {
							x.tap = true
						}
					}
				}
				return true
			})
			decls[key] = append(decls[key], x)
			if fd.Recv != nil {
				decls["."+fd.Name.Name] = append(decls["."+fd.Name.Name], x)
			}
		}
	}
	// reaches reports whether key reaches a declaration for which seed holds,
	// not looking inside the declarations named in opaque.
	reaches := func(key string, seed func(string) bool, opaque ...string) bool {
		seen := map[string]bool{}
		for _, k := range opaque {
			seen[k] = true
		}
		var walk func(string) bool
		walk = func(k string) bool {
			if seen[k] {
				return false
			}
			seen[k] = true
			if seed(k) {
				return true
			}
			for _, d := range decls[k] {
				for _, c := range d.calls {
					if walk(c) {
						return true
					}
				}
			}
			return false
		}
		return walk(key)
	}
	harnessCheck := func(k string) bool {
		switch k {
		case "wantFrameType", "testSession.readFrame", "testSession.drain":
			return true
		}
		return strings.HasPrefix(k, "testSession.want")
	}
	harnessSession := func(k string) bool {
		return k == "newHarness" || k == "newTestSession" || k == "newTestClient" || k == "newTestClientParams"
	}
	taps := func(k string) bool {
		if k == "startCapture" {
			return true
		}
		for _, d := range decls[k] {
			if d.tap {
				return true
			}
		}
		return false
	}
	// The helpers that parse the frames a session framed for its peer,
	// without a network: scriptedPeer.sentFrames, and parseRecords (under
	// stream_prio_test.go's frameAll).
	framed := func(k string) bool {
		return k == "scriptedPeer.sentFrames" || k == ".sentFrames" || k == "parseRecords"
	}
	// harness methods are reached by selector name ("."+m); resolve them
	// to the testSession methods when the function uses a harness session.
	sort.Strings(tests)
	var nHarness, nTap, nFramed, nAny, nSkip int
	for _, t := range tests {
		// The harness's own setup drains what the session sends while it
		// opens (testSession.started): a test counts only if its own code
		// or its helpers check what is sent.
		h := reaches(t, harnessSession) && reaches(t, func(k string) bool {
			return harnessCheck(k) || (strings.HasPrefix(k, ".") && harnessCheck("testSession"+k))
		}, "newHarness", "newTestSession", "newTestClient", "newTestClientParams", "testSession.started", ".started")
		tp := reaches(t, taps)
		fr := reaches(t, framed)
		if fr {
			nFramed++
		}
		if h {
			nHarness++
		}
		if tp {
			nTap++
		}
		if h || tp || fr {
			nAny++
			if decls[t][0].skip {
				nSkip++
			}
		}
		if *verbose {
			var vs []string
			for _, x := range []struct {
				ok   bool
				name string
			}{{h, "harness"}, {tp, "tap"}, {fr, "framed"}} {
				if x.ok {
					vs = append(vs, x.name)
				}
			}
			v := strings.Join(vs, "+")
			if v == "" {
				v = "-"
			}
			if decls[t][0].skip {
				v += "(skip)"
			}
			fmt.Printf("%-12s %-22s %s\n", v, decls[t][0].file, t)
		}
	}
	fmt.Printf("%s: %d Test functions; %d assert what is sent with the harness (want*/drain/readFrame) (%.0f%%), %d watch the send tap, %d parse what was framed (sentFrames, parseRecords); %d any of these (%.0f%%), of which %d are skipped (t.Skip first: bugs they found)\n",
		dir, len(tests), nHarness, pct(nHarness, len(tests)), nTap, nFramed, nAny, pct(nAny, len(tests)), nSkip)
}

func recvType(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return recvType(e.X)
	case *ast.IndexExpr:
		return recvType(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(of) }
