package surface

import (
	"go/ast"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// publicPackages are the packages docs/api.md maps.
var publicPackages = []string{"conn", "proto", "jsapi", "pull", "ordered", "pubwin", "kv", "objstore", "extra", "micro", "natstest", "natscontext", "sysapi", "deadletter", "pcgroup"}

// TestAPIMapNamesEveryExport: every exported name of the public packages
// (types, functions, methods, constants, variables) appears in
// docs/api.md, so that the one-page map stays the whole surface.
func TestAPIMapNamesEveryExport(t *testing.T) {
	doc, err := os.ReadFile("../../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`).FindAllString(string(doc), -1) {
		words[w] = true
	}
	// A family of names sharing a prefix (error sentinels, enum values,
	// header names) is written once as `Prefix*`.
	var families []string
	for _, m := range regexp.MustCompile("`([A-Z][A-Za-z0-9]*)\\*`").FindAllStringSubmatch(string(doc), -1) {
		families = append(families, m[1])
	}
	known := func(name string) bool {
		if words[name] || interfaceMethods[name] {
			return true
		}
		for _, f := range families {
			if strings.HasPrefix(name, f) {
				return true
			}
		}
		return false
	}
	for _, pkg := range publicPackages {
		missing := map[string]bool{}
		for _, name := range exportedNames(t, filepath.Join("../..", pkg)) {
			if !known(name) {
				missing[name] = true
			}
		}
		if len(missing) > 0 {
			var list []string
			for n := range missing {
				list = append(list, n)
			}
			sort.Strings(list)
			t.Errorf("%s: not in docs/api.md: %s", pkg, strings.Join(list, " "))
		}
	}
}

// interfaceMethods are methods that satisfy the standard library's
// interfaces (error, fmt.Stringer, json.Marshaler, errors.Is/As/Unwrap):
// they belong to their type's entry.
var interfaceMethods = map[string]bool{
	"Error": true, "String": true, "Unwrap": true, "Is": true, "As": true,
	"MarshalJSON": true, "UnmarshalJSON": true, "Format": true,
}

// exportedNames returns the exported top-level names and methods declared
// in dir's non-test files. Fields are left out: they belong to their type.
func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	files := parseDir(t, dir)
	var names []string
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !exportedRecv(d.Recv.List[0].Type) {
					continue
				}
				names = append(names, d.Name.Name)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							names = append(names, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() {
								names = append(names, n.Name)
							}
						}
					}
				}
			}
		}
	}
	return names
}

func exportedRecv(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
