package doccheck

import (
	"go/token"
	"strings"
	"testing"
)

// TestOptionOfAnotherCallDoesNotCompile: an option is typed by the calls
// that take it, so handing a fast publisher's option to the atomic
// publisher (or the reverse), or a Messages option to Fetch (or the
// reverse), is a compile error, not a run-time ErrInvalidOption. The same
// options given to their own calls compile.
func TestOptionOfAnotherCallDoesNotCompile(t *testing.T) {
	fset := token.NewFileSet()
	imp := exportImporter(t, fset)
	for _, tc := range []struct{ code, want string }{
		{`_, err := extra.NewBatchPublisher(js, extra.Flow(10))`, "extra.FastOpt"},
		{`_, err := extra.NewBatchPublisher(js, extra.FastAckTimeout(time.Second))`, "extra.FastOpt"},
		{`_, err := extra.PublishBatch(ctx, js, nil, extra.PingInterval(time.Second))`, "extra.FastOpt"},
		{`_, err := extra.NewFastPublisher(js, extra.AckEvery(2))`, "extra.AtomicOpt"},
		{`_, err := extra.NewFastPublisher(js, extra.RetryStart(2, time.Second))`, "extra.AtomicOpt"},
		{"var c *pull.Consumer\n_, err := c.Fetch(ctx, 1, pull.Borrowed())", "pull.Opt"},
		{"var c *pull.Consumer\n_, err := c.Next(ctx, pull.ReadAhead(true))", "pull.Opt"},
		{"var c *pull.Consumer\nfor range c.Messages(ctx, pull.NoWait()) {}", "pull.FetchOpt"},
		{`for range extra.GetBatch(ctx, js, "S", 1, extra.UpToSeq(3)) {}`, "extra.GetLastMsgsOpt"},
		{`for range extra.GetLastMsgsFor(ctx, js, "S", nil, extra.StartSeq(3)) {}`, "extra.GetBatchOpt"},
		{`_, err := js.Publish(ctx, "s", nil, jsapi.RetryOnNoResponders(2, time.Second))`, "jsapi.PubOpt"},
		{`_, err := jsapi.New(nil, jsapi.MsgID("a"))`, "jsapi.Option"},
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
		`_, err := extra.NewFastPublisher(js, extra.Flow(10), extra.FastAckTimeout(time.Second), extra.FastRetryStart(2, time.Second))`,
		`_, err := extra.NewBatchPublisher(js, extra.AckEvery(2), extra.AckTimeout(time.Second), extra.RetryStart(2, time.Second))`,
		`_, err := extra.PublishBatch(ctx, js, nil, extra.MaxBatchSize(10))`,
		"var c *pull.Consumer\n_, err := c.Fetch(ctx, 1, pull.NoWait(), pull.FetchGroup(\"g\"), pull.FetchMaxBytes(1))",
		"var c *pull.Consumer\nfor range c.Messages(ctx, pull.Borrowed(), pull.Group(\"g\"), pull.MaxBytes(1)) {}",
		`for range extra.GetBatch(ctx, js, "S", 1, extra.StartSeq(3), extra.MaxBytes(1)) {}`,
		`for range extra.GetLastMsgsFor(ctx, js, "S", nil, extra.UpToSeq(3), extra.PageBytes(1)) {}`,
		`_, err := jsapi.New(nil, jsapi.RetryOnNoResponders(2, time.Second))`,
		`_, err := js.Publish(ctx, "s", nil, jsapi.MsgID("a"), jsapi.TTL(time.Minute))`,
	} {
		if err := check(fset, imp, snippet{file: "x.md", line: 1, code: code}); err != nil {
			t.Errorf("%s: %v", code, err)
		}
	}
}
