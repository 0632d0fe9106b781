package doccheck

import (
	"go/token"
	"strings"
	"testing"
)

// TestStoreOptionOfAnotherCallDoesNotCompile: kv's Delete and Purge take
// options of their own types, so a purge TTL handed to Delete is a compile
// error (it was a run-time ErrTTLOnDelete), and a store's read option is
// not a watch option. The same options given to their own calls compile.
func TestStoreOptionOfAnotherCallDoesNotCompile(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset)
	for _, tc := range []struct{ code, want string }{
		{"var b *kv.Bucket\nerr := b.Delete(ctx, \"k\", kv.PurgeTTL(time.Second))", "kv.DeleteOpt"},
		{"var b *kv.Bucket\nerr := b.Delete(ctx, \"k\", kv.PurgeLastRevision(1))", "kv.DeleteOpt"},
		{"var b *kv.Bucket\nerr := b.Purge(ctx, \"k\", kv.LastRevision(1))", "kv.PurgeOpt"},
		{"var s *objstore.Store\nfor _, err := range s.Watch(ctx, objstore.ShowDeleted()) {\n_ = err\n}", "objstore.WatchOpt"},
	} {
		err := check(fset, imp, snippet{file: "x.md", line: 1, code: tc.code})
		if err == nil {
			t.Errorf("%s compiles", tc.code)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "cannot use") || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: %v, want a type error naming %s", tc.code, err, tc.want)
		}
	}
	for _, code := range []string{
		"var b *kv.Bucket\nerr := b.Delete(ctx, \"k\", kv.LastRevision(1))",
		"var b *kv.Bucket\nerr := b.Purge(ctx, \"k\", kv.PurgeLastRevision(1), kv.PurgeTTL(time.Second))",
		"var s *objstore.Store\nfor _, err := range s.List(ctx, objstore.ShowDeleted()) {\n_ = err\n}",
	} {
		if err := check(fset, imp, snippet{file: "x.md", line: 1, code: code}); err != nil {
			t.Errorf("%s: %v", code, err)
		}
	}
}
