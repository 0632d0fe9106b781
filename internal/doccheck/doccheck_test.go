package doccheck

import (
	"errors"
	"fmt"
	"go/ast"
	"go/doc/comment"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the module root, relative to this package.
const root = "../.."

// env declares what the documentation takes as given: a context, a
// connection, a JetStream view, a payload, a test (in the docs of test
// helpers), and use, which stands for whatever the reader does with a
// value.
const env = `package snippet

import (
	"context"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/jsapi"
)

var (
	ctx  context.Context
	nc   *conn.Conn
	js   *jsapi.JS
	data []byte
	t    *testing.T
)

func use(...any) {}
`

// imports maps a package name a snippet may use to its import path; a
// snippet gets the import of every name it qualifies an identifier with.
var imports = map[string]string{
	"conn": "github.com/natsio/natsio/conn", "proto": "github.com/natsio/natsio/proto",
	"jsapi": "github.com/natsio/natsio/jsapi", "kv": "github.com/natsio/natsio/kv",
	"objstore": "github.com/natsio/natsio/objstore", "extra": "github.com/natsio/natsio/extra",
	"pull": "github.com/natsio/natsio/pull", "ordered": "github.com/natsio/natsio/ordered",
	"pubwin": "github.com/natsio/natsio/pubwin", "micro": "github.com/natsio/natsio/micro",
	"natstest":    "github.com/natsio/natsio/natstest",
	"pcgroup":     "github.com/natsio/natsio/pcgroup",
	"deadletter":  "github.com/natsio/natsio/deadletter",
	"natscontext": "github.com/natsio/natsio/natscontext",
	"sysapi":      "github.com/natsio/natsio/sysapi",
	"fakeserver":  "github.com/natsio/natsio/internal/fakeserver",
	"faultproxy":  "github.com/natsio/natsio/internal/faultproxy",
	"memnet":      "github.com/natsio/natsio/internal/memnet",
	"context":     "context", "errors": "errors", "fmt": "fmt", "time": "time", "io": "io", "os": "os",
	"strings": "strings", "bytes": "bytes", "log": "log", "slog": "log/slog", "json": "encoding/json",
	"sync": "sync", "atomic": "sync/atomic", "iter": "iter", "testing": "testing",
	"synctest": "testing/synctest", "tls": "crypto/tls", "http": "net/http", "net": "net",
	"signal": "os/signal", "syscall": "syscall", "strconv": "strconv", "slices": "slices",
	"rand": "math/rand/v2", "filepath": "path/filepath",
}

// qualified matches an identifier qualified with a package name.
var qualified = func() func(name string) *regexp.Regexp {
	res := map[string]*regexp.Regexp{}
	for name := range imports {
		res[name] = regexp.MustCompile(`\b` + name + `\.`)
	}
	return func(name string) *regexp.Regexp { return res[name] }
}()

// snippet is one code block of the documentation.
type snippet struct {
	file string // relative to the module root
	line int    // of the block's first line
	code string
}

func (s snippet) String() string { return fmt.Sprintf("%s:%d", s.file, s.line) }

// TestDocSnippetsCompile type-checks every Go snippet of the documentation.
func TestDocSnippetsCompile(t *testing.T) {
	snippets := collect(t)
	if len(snippets) < 20 {
		t.Fatalf("only %d snippets found: is the extraction broken?", len(snippets))
	}
	fset := token.NewFileSet()
	imp := exportImporter(t, fset)
	for _, s := range snippets {
		if err := check(fset, imp, s); err != nil {
			t.Errorf("%s does not compile:\n%v\n--- snippet:\n%s", s, err, s.code)
		}
	}
	t.Logf("%d snippets checked", len(snippets))
}

// exportImporter returns an importer of the packages snippets may import
// (and their dependencies) that reads the compiler's export data, as
// "go list -export" reports it: the packages are compiled, or taken from
// the build cache, by the go command.
func exportImporter(t *testing.T, fset *token.FileSet) types.Importer {
	t.Helper()
	args := []string{"list", "-export", "-deps", "-f", "{{if .Export}}{{.ImportPath}}\t{{.Export}}{{end}}"}
	for _, path := range imports {
		args = append(args, path)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	files := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, file, ok := strings.Cut(line, "\t"); ok {
			files[path] = file
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("no export data for %q (add it to imports)", path)
		}
		return os.Open(file)
	})
}

// collect extracts the snippets of README.md, docs/*.md and every doc.go.
func collect(t *testing.T) []snippet {
	t.Helper()
	md, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	md = append(md, filepath.Join(root, "README.md"))
	var out []snippet
	for _, path := range md {
		rel := relPath(t, path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, markdownSnippets(rel, string(b))...)
	}
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || isModule(path)) {
			return filepath.SkipDir
		}
		if d.Name() != "doc.go" {
			return nil
		}
		s, err := docSnippets(relPath(t, path), path)
		out = append(out, s...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func relPath(t *testing.T, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		t.Fatal(err)
	}
	return filepath.ToSlash(rel)
}

// isModule reports whether dir is the root of another module (bench/).
func isModule(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "go.mod"))
	return err == nil
}

var fence = regexp.MustCompile("^```\\s*([^\\s`]*)\\s*$")

// markdownSnippets returns the ```go blocks of a Markdown file, but those
// after a <!-- not compiled --> line.
func markdownSnippets(file, text string) []snippet {
	var out []snippet
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		m := fence.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		start := i
		for i++; i < len(lines) && !fence.MatchString(lines[i]); i++ {
		}
		if m[1] != "go" || notCompiled(lines[:start]) {
			continue
		}
		out = append(out, snippet{file: file, line: start + 2, code: strings.Join(lines[start+1:min(i, len(lines))], "\n")})
	}
	return out
}

// notCompiled reports whether the last non-blank line of before marks the
// block after it as not compiled.
func notCompiled(before []string) bool {
	for i := len(before) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(before[i]); l != "" {
			return l == "<!-- not compiled -->"
		}
	}
	return false
}

// docSnippets returns the code blocks of a file's package comment, but
// shell commands.
func docSnippets(file, path string) ([]snippet, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil || f.Doc == nil {
		return nil, err
	}
	var p comment.Parser
	var out []snippet
	var walk func([]comment.Block)
	walk = func(blocks []comment.Block) {
		for _, b := range blocks {
			switch b := b.(type) {
			case *comment.Code:
				if strings.HasPrefix(b.Text, "$ ") {
					continue
				}
				out = append(out, snippet{file: file, line: lineOf(string(src), b.Text), code: b.Text})
			case *comment.List:
				for _, it := range b.Items {
					walk(it.Content)
				}
			}
		}
	}
	walk(p.Parse(f.Doc.Text()).Content)
	return out, nil
}

// lineOf returns the line of src holding the first line of code, in a
// comment.
func lineOf(src, code string) int {
	first, _, _ := strings.Cut(code, "\n")
	for i, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(l, "//") && strings.TrimSpace(strings.TrimPrefix(l, "//")) == strings.TrimSpace(first) {
			return i + 1
		}
	}
	return 0
}

// check type-checks s. A snippet that starts with a function declaration
// (a test, a TestMain, a handler) is a file of top-level declarations, and
// so is any other snippet that parses as one (var, type and const
// declarations alone). Any other is the body of a function returning an
// error, or of one returning nothing: of these two forms, the errors of the
// one that came closer are returned.
func check(fset *token.FileSet, imp types.Importer, s snippet) error {
	envFile, err := parser.ParseFile(fset, "env.go", env, 0)
	if err != nil {
		return err
	}
	var names []string
	for name, path := range imports {
		if qualified(name).MatchString(s.code) {
			names = append(names, fmt.Sprintf("%q", path))
		}
	}
	slices.Sort(names)
	head := "package snippet\nimport (" + strings.Join(names, "; ") + ")\n"
	at := fmt.Sprintf("//line %s:%d\n", s.file, s.line)
	name := filepath.Join(root, "snippet.go")

	f, err := parser.ParseFile(fset, name, head+at+s.code+"\n", parser.SkipObjectResolution)
	if err == nil {
		return errors.Join(typeCheck(fset, imp, envFile, f)...)
	}
	if startsWithFunc(s.code) {
		return err // a declaration that is not Go: not to be read as statements
	}
	var best []error
	for i, body := range []string{
		"func _() error {\n" + at + s.code + "\nreturn nil\n}\n",
		"func _() {\n" + at + s.code + "\n}\n",
	} {
		f, err := parser.ParseFile(fset, name, head+body, parser.SkipObjectResolution)
		if err != nil {
			return err // both forms parse alike
		}
		errs := typeCheck(fset, imp, envFile, f)
		if len(errs) == 0 {
			return nil
		}
		if i == 0 || len(errs) < len(best) {
			best = errs
		}
	}
	return errors.Join(best...)
}

// funcDecl matches the start of a function or method declaration.
var funcDecl = regexp.MustCompile(`^func\s+[\pL_(]`)

// startsWithFunc reports whether the first line of code that is neither
// blank nor a comment declares a function or a method (a function literal,
// "func() {", is a statement's start, not a declaration).
func startsWithFunc(code string) bool {
	for l := range strings.Lines(code) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "//") {
			return funcDecl.MatchString(l)
		}
	}
	return false
}

// typeCheck type-checks f with the declarations of env and returns its
// errors, but those saying only that something is unused.
func typeCheck(fset *token.FileSet, imp types.Importer, env, f *ast.File) []error {
	var errs []error
	conf := types.Config{Importer: imp, Error: func(err error) {
		if te, ok := err.(types.Error); ok && te.Soft && unusedOnly(te.Msg) {
			return
		}
		errs = append(errs, err)
	}}
	_, _ = conf.Check("snippet", fset, []*ast.File{env, f}, nil)
	return errs
}

// unusedOnly reports whether a soft error only says something is unused.
func unusedOnly(msg string) bool {
	return strings.Contains(msg, "declared and not used") || strings.Contains(msg, "imported and not used")
}

// TestCheckerRejects: the checker fails a snippet that calls what does not
// exist, misuses a type or is not Go, and passes the forms it allows; the
// extraction keeps go blocks only and honours the markers.
func TestCheckerRejects(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset)
	for _, code := range []string{
		`nc.Pubish("a", data)`,                      // no such method
		`err := nc.Publish(1, data)`,                // wrong argument type
		`if err != nil { … }`,                       // a placeholder
		`b, err := kv.Bind(ctx, js, "b"); use(bkt)`, // an undeclared name
		"func TestX(t *testing.T) {\n\tuse(s)\n}",   // an undeclared name in a test
	} {
		if err := check(fset, imp, snippet{file: "x.md", line: 1, code: code}); err == nil {
			t.Errorf("%q passed", code)
		}
	}
	// A declaration that does not parse is reported as such, not as the
	// statements it is not.
	code := "func TestX(t *testing.T) {\n\ts := natstest.NewServer(t)\n\t…\n}"
	if err := check(fset, imp, snippet{file: "x.md", line: 1, code: code}); err == nil || !strings.Contains(err.Error(), "x.md:3") || !strings.Contains(err.Error(), "U+2026") {
		t.Errorf("%q: %v, want the placeholder on line 3", code, err)
	}
	for _, code := range []string{
		`nc, err := conn.Connect(ctx, "nats://127.0.0.1:4222")`, // unused: allowed
		"if err := nc.Flush(ctx); err != nil {\n\treturn err\n}",
		"func handler(m *conn.Msg) { _ = m.Respond(nil) }",                                 // a declaration
		`for range 3 { return }`,                                                           // a function without result
		"func TestX(t *testing.T) {\n\ts := natstest.NewServer(t)\n\tuse(s.Connect(t))\n}", // a test
		"var url string\n\nfunc TestMain(m *testing.M) {\n\ts, err := natstest.Start()\n\tif err != nil {\n\t\tlog.Fatal(err)\n\t}\n\turl = s.URL()\n\tos.Exit(m.Run())\n}", // a TestMain
		"var h proto.Header\nh.Set(\"K\", \"v\")", // a declaration, then statements
		"go func() {\n\tuse(nc)\n}()",             // a function literal
	} {
		if err := check(fset, imp, snippet{file: "x.md", line: 1, code: code}); err != nil {
			t.Errorf("%q failed: %v", code, err)
		}
	}

	md := "```go\na := 1\n```\n\n<!-- not compiled -->\n```go\nb := …\n```\n```sh\n$ go test\n```\n```\nplain\n```\n"
	got := markdownSnippets("x.md", md)
	if len(got) != 1 || got[0].code != "a := 1" || got[0].line != 2 {
		t.Fatalf("markdown extraction: %+v", got)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "doc.go")
	src := "// Package x.\n//\n//\tx := 1\n//\n// Run:\n//\n//\t$ go test ./x\npackage x\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, err := docSnippets("x/doc.go", path)
	if err != nil || len(docs) != 1 || docs[0].code != "x := 1\n" || docs[0].line != 3 {
		t.Fatalf("doc.go extraction: %+v %v", docs, err)
	}
}
