package surface

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// plainData are the exported types whose names end in Options but which
// are data, not options: structs whose fields the caller fills in and the
// call sends or stores as they are. The option rule of docs/api.md leaves
// them out; each is listed with the reason it is data.
var plainData = map[string]string{
	"sysapi.VarzOptions":     "the filter of a $SYS VARZ request, sent as JSON",
	"sysapi.SubszOptions":    "the filter of a $SYS SUBSZ request, sent as JSON",
	"sysapi.JszOptions":      "the filter of a $SYS JSZ request, sent as JSON",
	"sysapi.StatszOptions":   "the filter of a $SYS STATSZ request, sent as JSON",
	"sysapi.ConnzOptions":    "the filter of a $SYS CONNZ request, sent as JSON",
	"sysapi.HealthzOptions":  "the filter of a $SYS HEALTHZ request, sent as JSON",
	"sysapi.RoutezOptions":   "the filter of a $SYS ROUTEZ request, sent as JSON",
	"sysapi.GatewayzOptions": "the filter of a $SYS GATEWAYZ request, sent as JSON",
	"sysapi.LeafzOptions":    "the filter of a $SYS LEAFZ request, sent as JSON",
	"sysapi.AccountzOptions": "the filter of a $SYS ACCOUNTZ request, sent as JSON",
	"objstore.MetaOptions":   "an object's stored options (the meta message's \"options\" field)",
}

// optionModules are the packages the rule is checked in: the public
// packages of the library module and the OpenTelemetry module.
var optionModules = append(append([]string{}, publicPackages...), "otel")

// TestOptionRule: every exported type whose name ends in Opt, Option or
// Options follows the option rule at the top of docs/api.md (or is plain
// data listed in plainData): an opaque struct, named Option or <Call>Opt,
// built by an exported function of its package.
func TestOptionRule(t *testing.T) {
	var broken []string
	seen := map[string]bool{}
	for _, pkg := range optionModules {
		files := parseDir(t, filepath.Join("../..", pkg))
		broken = append(broken, optionViolations(pkg, files, seen)...)
	}
	for name := range plainData {
		if !seen[name] {
			broken = append(broken, name+": listed as plain data but not declared (remove it from plainData)")
		}
	}
	sort.Strings(broken)
	if len(broken) > 0 {
		t.Errorf("%d option types break the option rule of docs/api.md:\n\t%s", len(broken), strings.Join(broken, "\n\t"))
	}
}

// TestOptionRuleCatches: the checker reports each way an option type can
// break the rule, and passes one that keeps it.
func TestOptionRuleCatches(t *testing.T) {
	src := `package x
type Option func(*config) error
type FooOption struct{ f func() }
type BarOpt struct{ X int }
type BazOpt interface{ apply() }
type QuxOpt struct{ qux }
type qux struct{ Exported int }
type NoCtorOpt struct{ n int }
type GoodOpt struct{ n int }
type AliasOpt = GoodOpt
type Options struct{ N int }
type (
	DefinedOpt goodOpt
	goodOpt    struct{ n int }
)
func Good(n int) GoodOpt { return GoodOpt{n} }
func Defined() DefinedOpt { return DefinedOpt{} }
func Foo() FooOption { return FooOption{} }
func Bar() BarOpt { return BarOpt{} }
func Qux() QuxOpt { return QuxOpt{} }
func (GoodOpt) Method() NoCtorOpt { return NoCtorOpt{} } // a method is no constructor
func newNoCtor() NoCtorOpt { return NoCtorOpt{} }
`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := optionViolations("x", []*ast.File{f}, map[string]bool{})
	want := []string{"x.Option", "x.FooOption", "x.BarOpt", "x.BazOpt", "x.QuxOpt", "x.NoCtorOpt", "x.AliasOpt", "x.Options"}
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.HasPrefix(g, w+":") {
				found = true
			}
		}
		if !found {
			t.Errorf("%s not reported; got %q", w, got)
		}
	}
	for _, g := range got {
		if strings.HasPrefix(g, "x.GoodOpt:") || strings.HasPrefix(g, "x.DefinedOpt:") {
			t.Errorf("a type that keeps the rule reported: %s", g)
		}
	}
}

// optionViolations returns how the option types declared in files (of
// package pkg) break the rule, one line per type; seen collects the
// plain-data types found.
func optionViolations(pkg string, files []*ast.File, seen map[string]bool) []string {
	types := map[string]*ast.TypeSpec{}
	ctors := map[string]bool{} // types an exported function returns
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if s, ok := s.(*ast.TypeSpec); ok {
						types[s.Name.Name] = s
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil || !d.Name.IsExported() || d.Type.Results == nil {
					continue
				}
				for _, r := range d.Type.Results.List {
					if id, ok := r.Type.(*ast.Ident); ok {
						ctors[id.Name] = true
					}
				}
			}
		}
	}
	var out []string
	for name, spec := range types {
		if !ast.IsExported(name) || !isOptionName(name) {
			continue
		}
		full := pkg + "." + name
		if _, ok := plainData[full]; ok {
			seen[full] = true
			if _, isStruct := spec.Type.(*ast.StructType); !isStruct || spec.Assign.IsValid() {
				out = append(out, full+": listed as plain data but not a struct")
			}
			continue
		}
		var why []string
		if name != "Option" && !strings.HasSuffix(name, "Opt") {
			why = append(why, "named neither Option nor <Call>Opt")
		}
		if spec.Assign.IsValid() {
			why = append(why, "an alias")
		} else if msg := opaqueStruct(spec.Type, types, 0); msg != "" {
			why = append(why, msg)
		}
		if !ctors[name] {
			why = append(why, "no exported function returns it")
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("%s: %s", full, strings.Join(why, "; ")))
		}
	}
	return out
}

// isOptionName reports whether a type's name says it is an option.
func isOptionName(name string) bool {
	return strings.HasSuffix(name, "Opt") || strings.HasSuffix(name, "Option") || strings.HasSuffix(name, "Options")
}

// opaqueStruct returns "" if e is a struct type without exported fields
// (directly, or through the package's own type it is defined from), else
// what it is instead.
func opaqueStruct(e ast.Expr, types map[string]*ast.TypeSpec, depth int) string {
	switch x := e.(type) {
	case *ast.StructType:
		for _, f := range x.Fields.List {
			if len(f.Names) == 0 { // embedded: its name is its type's
				if id := embeddedName(f.Type); ast.IsExported(id) {
					return "embeds exported " + id
				} else if s, ok := types[id]; ok && depth < 8 {
					if msg := opaqueStruct(s.Type, types, depth+1); msg != "" {
						return "embeds " + id + ", which " + msg
					}
				}
			}
			for _, n := range f.Names {
				if n.IsExported() {
					return "has exported field " + n.Name
				}
			}
		}
		return ""
	case *ast.Ident:
		if s, ok := types[x.Name]; ok && depth < 8 && !s.Assign.IsValid() {
			return opaqueStruct(s.Type, types, depth+1)
		}
		return "defined from " + x.Name + ", not a struct"
	case *ast.FuncType:
		return "a func type, not an opaque struct"
	case *ast.InterfaceType:
		return "an interface, not an opaque struct"
	default:
		return fmt.Sprintf("a %T, not an opaque struct", e)
	}
}

func embeddedName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// parseDir parses the non-test Go files of dir.
func parseDir(t *testing.T, dir string) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if n := e.Name(); !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}
