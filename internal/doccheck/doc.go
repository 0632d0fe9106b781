// Package doccheck holds a test that compiles the Go snippets of the
// documentation: the ```go blocks of README.md and docs/*.md and the code
// blocks of every package comment (doc.go). It has no API.
//
// A snippet is type-checked as the body of a function with the imports its
// package names call for, against the module's packages; a snippet that
// starts with a function declaration (a whole test, a TestMain), or that
// parses as top-level declarations, is checked as a file of them instead.
// The few names the documentation takes as given (ctx, nc, js, data, …)
// are declared by the test; every other name a snippet uses must be
// declared in it.
// Unused variables and imports are allowed, since a snippet shows a call,
// not a program.
//
// Blocks that are not Go are left out by their marking: in Markdown, a
// fence whose info string is not "go" (sh, console, none), or a go block
// preceded by the line <!-- not compiled -->; in a package comment, a code
// block whose first line starts with "$ " (a shell command).
package doccheck
