package surface

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"iter"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/deadletter"
	"github.com/natsio/natsio/extra"
	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/kv"
	"github.com/natsio/natsio/micro"
	"github.com/natsio/natsio/objstore"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pcgroup"
	"github.com/natsio/natsio/sysapi"
)

// deadlineCall is one blocking call TestDeadlineRule runs against the
// stalled server.
type deadlineCall struct {
	// name is the call as package.Type.Method or package.Func.
	name string
	call func(ctx context.Context) error
	// noDefault: the call has no default timeout of its own shorter
	// than the test's patience (it waits as long as its context, or
	// until the connection is closed).
	noDefault bool
	// gap, when set, says what of the rule does not hold for the call
	// yet and who fixes it: the test then logs the failures, and fails
	// once they are gone, so that the note is removed with the fix.
	gap string
	// emptyAtDeadline: a wait that reaches the deadline is the call's
	// normal end, no error (pull.Consumer.Fetch returns the empty batch,
	// as nats.go does; Next fails with the timeout error).
	emptyAtDeadline bool
}

// firstErr ranges over seq until it yields an error, and returns it (nil
// when seq ends without one).
func firstErr[T any](seq iter.Seq2[T, error]) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// deadlineCalls are the blocking calls TestDeadlineRule runs: at least one
// of every way a public call can wait (a request, a flush, a round trip,
// a subscription read, a pull, an ordered read, a watch, a publish
// window, a batch publish, a batch get). sharedPath lists the others with
// the call they wait like.
func deadlineCalls(e *deadlineEnv) []deadlineCall {
	return []deadlineCall{
		{name: "conn.Connect", noDefault: true, call: func(ctx context.Context) error {
			nc, err := conn.Connect(ctx, e.url)
			if err == nil {
				nc.Close()
			}
			return err
		}},
		{name: "conn.Conn.Request", call: func(ctx context.Context) error {
			_, err := e.nc.Request(ctx, "nobody.answers", nil)
			return err
		}},
		{name: "conn.Conn.RequestMsg", call: func(ctx context.Context) error {
			_, err := e.nc.RequestMsg(ctx, "nobody.answers", nil, nil)
			return err
		}},
		{name: "conn.Conn.RequestMany", call: func(ctx context.Context) error {
			return firstErr(e.nc.RequestMany(ctx, "nobody.answers", nil, nil))
		}},
		{name: "conn.Conn.Trace", call: func(ctx context.Context) error {
			_, err := e.nc.Trace(ctx, "nobody.answers", nil, nil)
			return err
		}},
		{name: "conn.Conn.RequestUnobserved", call: func(ctx context.Context) error {
			_, err := e.nc.RequestUnobserved(ctx, "nobody.answers", nil, nil)
			return err
		}},
		{name: "conn.Subscription.NextBatch", noDefault: true, call: func(ctx context.Context) error {
			sub, err := e.nc.SubscribeBatches("nobody.sends.batch", false)
			if err != nil {
				return err
			}
			defer sub.Unsubscribe()
			_, err = sub.NextBatch(ctx, nil)
			return err
		}},
		{name: "conn.Batches.Next", noDefault: true, call: func(ctx context.Context) error {
			b, err := jsapi.SubscribeBatches(e.nc, "nobody.sends.jsbatch", 8, false, false)
			if err != nil {
				return err
			}
			defer b.Subscription().Unsubscribe()
			_, err = b.Next(ctx)
			return err
		}},
		{name: "conn.Conn.Flush", call: func(ctx context.Context) error { return e.nc.Flush(ctx) }},
		{name: "conn.Conn.RTT", call: func(ctx context.Context) error {
			_, err := e.nc.RTT(ctx)
			return err
		}},
		{name: "conn.Subscription.NextMsg", noDefault: true, call: func(ctx context.Context) error {
			_, err := e.sub.NextMsg(ctx)
			return err
		}},
		{name: "conn.Subscription.Messages", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(e.sub.Messages(ctx))
		}},
		{name: "conn.Subscription.Drain", call: func(ctx context.Context) error {
			sub, err := e.nc.Subscribe("nobody.sends.drain")
			if err != nil {
				return err
			}
			return sub.Drain(ctx)
		}},
		{name: "jsapi.JS.Stream", call: func(ctx context.Context) error {
			_, err := e.js.Stream(ctx, "D")
			return err
		}},
		{name: "jsapi.JS.Stream (JS Timeout of its own)", call: func(ctx context.Context) error {
			_, err := e.jsOwn.Stream(ctx, "D")
			return err
		}},
		{name: "jsapi.JS.Publish (JS Timeout of its own)", call: func(ctx context.Context) error {
			_, err := e.jsOwn.Publish(ctx, "d.a", []byte("x"))
			return err
		}},
		{name: "jsapi.JS.AccountInfo", call: func(ctx context.Context) error {
			_, err := e.js.AccountInfo(ctx)
			return err
		}},
		{name: "jsapi.JS.Publish", call: func(ctx context.Context) error {
			_, err := e.js.Publish(ctx, "d.a", []byte("x"))
			return err
		}},
		{name: "jsapi.Stream.GetMsg", call: func(ctx context.Context) error {
			_, err := e.stream.GetMsg(ctx, 1)
			return err
		}},
		{name: "jsapi.Msg.AckSync", call: func(ctx context.Context) error { return e.msg.AckSync(ctx) }},
		{name: "kv.Bucket.Get", call: func(ctx context.Context) error {
			_, err := e.kv.Get(ctx, "k")
			return err
		}},
		{name: "kv.Bucket.Put", call: func(ctx context.Context) error {
			_, err := e.kv.Put(ctx, "k", []byte("w"))
			return err
		}},
		{name: "kv.Bucket.Watch", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(e.kv.Watch(ctx, "k"))
		}},
		{name: "kv.Bucket.Keys", noDefault: true, call: func(ctx context.Context) error {
			_, err := e.kv.Keys(ctx)
			return err
		}},
		{name: "kv.Bind", call: func(ctx context.Context) error {
			_, err := kv.Bind(ctx, e.js, "dl")
			return err
		}},
		{name: "objstore.Store.PutBytes", call: func(ctx context.Context) error {
			_, err := e.store.PutBytes(ctx, "o2", []byte("data"))
			return err
		}},
		{name: "objstore.Store.GetBytes", call: func(ctx context.Context) error {
			_, err := e.store.GetBytes(ctx, "o")
			return err
		}},
		{name: "objstore.Store.GetInfo", call: func(ctx context.Context) error {
			_, err := e.store.GetInfo(ctx, "o")
			return err
		}},
		{name: "objstore.Store.Watch", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(e.store.Watch(ctx))
		}},
		{name: "objstore.Store.List", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(e.store.List(ctx))
		}},
		{name: "objstore.Store.RemoveBadMeta", call: func(ctx context.Context) error {
			return e.store.RemoveBadMeta(ctx, "o")
		}},
		{name: "objstore.Bind", call: func(ctx context.Context) error {
			_, err := objstore.Bind(ctx, e.js, "dl")
			return err
		}},
		// Fetch and Next wait DefaultFetchWait (30 s) for a context without
		// deadline: pull's TestSynctestDefaultFetchWait covers it on a
		// fake clock.
		{name: "pull.Consumer.Next", noDefault: true, call: func(ctx context.Context) error {
			_, err := e.cons.Next(ctx)
			return err
		}},
		{name: "pull.Consumer.Fetch", noDefault: true, emptyAtDeadline: true, call: func(ctx context.Context) error {
			_, err := e.cons.Fetch(ctx, 10)
			return err
		}},
		{name: "pull.Consumer.Messages", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(e.cons.Messages(ctx))
		}},
		{name: "pull.Consumer.Info", call: func(ctx context.Context) error {
			_, err := e.cons.Info(ctx)
			return err
		}},
		{name: "ordered.New", noDefault: true, call: func(ctx context.Context) error {
			_, err := ordered.New(ctx, e.js, "D", ordered.Config{})
			return err
		}},
		{name: "pubwin.Future.Wait", call: func(ctx context.Context) error {
			f, err := e.win.Publish(context.Background(), "d.a", []byte("x"))
			if err != nil {
				return err
			}
			_, err = f.Wait(ctx)
			return err
		}},
		{name: "pubwin.Window.Complete", noDefault: true, call: func(ctx context.Context) error {
			if _, err := e.win.Publish(context.Background(), "d.a", []byte("x")); err != nil {
				return err
			}
			return e.win.Complete(ctx)
		}},
		{name: "extra.PublishBatch", call: func(ctx context.Context) error {
			_, err := extra.PublishBatch(ctx, e.js, []extra.BatchMsg{{Subject: "d.a"}, {Subject: "d.a"}})
			return err
		}},
		{name: "extra.FastPublisher.Add", call: func(ctx context.Context) error {
			p, err := extra.NewFastPublisher(e.js)
			if err != nil {
				return err
			}
			defer p.Abort()
			_, err = p.Add(ctx, "d.a", []byte("x"))
			return err
		}},
		{name: "extra.GetBatch", call: func(ctx context.Context) error {
			return firstErr(extra.GetBatch(ctx, e.js, "D", 10))
		}},
		{name: "pcgroup.GetStatic", call: func(ctx context.Context) error {
			_, err := pcgroup.GetStatic(ctx, e.js, "D", "g")
			return err
		}},
		{name: "pcgroup.Messages", noDefault: true, call: func(ctx context.Context) error {
			return firstErr(pcgroup.Messages(ctx, e.js, pcgroup.Static, "D", "g", "m1", pcgroup.MemberConfig{}))
		}},
		{name: "deadletter.Start", call: func(ctx context.Context) error {
			_, err := deadletter.Start(ctx, e.js, deadletter.Config{Stream: "D"})
			return err
		}},
		{name: "micro.Ping", call: func(ctx context.Context) error {
			_, err := micro.Ping(ctx, e.nc, "")
			return err
		}},
		{name: "sysapi.Client.Varz", call: func(ctx context.Context) error {
			_, err := e.sys.Varz(ctx, "NSERVER", sysapi.VarzOptions{})
			return err
		}},
		{name: "sysapi.Client.PingVarz", call: func(ctx context.Context) error {
			_, err := e.sys.PingVarz(ctx, sysapi.VarzOptions{})
			return err
		}},
	}
}

// sharedPath are the blocking calls TestDeadlineRule does not run, each
// with the call it runs that waits the same way (the same request path),
// or why it cannot wait on a stalled server.
var sharedPath = map[string]string{
	"conn.Conn.Drain":                   "closes the connection: conn.Subscription.Drain's flush, then the drain timeout",
	"conn.Conn.WaitConnected":           "returns at once while connected; a reconnect wait ends by ctx like conn.Conn.Flush",
	"natscontext.Connect":               "conn.Connect",
	"jsapi.JS.APILevel":                 "jsapi.JS.AccountInfo",
	"jsapi.JS.ApplyPubOpts":             "jsapi.JS.AccountInfo (the feature check's $JS.API.INFO, for a JS with a Domain or APIPrefix)",
	"jsapi.JS.Check":                    "jsapi.JS.AccountInfo",
	"jsapi.JS.PublishMsg":               "jsapi.JS.Publish",
	"jsapi.Stream.Counter":              "jsapi.Stream.GetMsg",
	"jsapi.Stream.GetLastMsgForSubject": "jsapi.Stream.GetMsg",
	"jsapi.Stream.GetNextMsgForSubject": "jsapi.Stream.GetMsg",
	"micro.Infos":                       "micro.Ping",
	"micro.StatsOf":                     "micro.Ping",
	"micro.Service.Stop":                "conn.Subscription.Drain",
	"ordered.Consumer.Messages":         "pull.Consumer.Messages (under ordered.New's recreation)",
	"ordered.Consumer.Consume":          "returns at once; its read ends with ctx like ordered.Consumer.Messages",
	"ordered.Consumer.Info":             "jsapi.JS.Stream",
	"ordered.Consumer.Delete":           "jsapi.JS.Stream",
	"pull.Consumer.Consume":             "returns at once; its read ends with ctx like pull.Consumer.Messages",
	"pubwin.Window.Publish":             "returns at once while the window has room; a full one waits StallWait like pubwin.Future.Wait",
	"pubwin.Window.PublishMsg":          "returns at once, as pubwin.Window.Publish",
	"kv.Bucket.WatchAll":                "kv.Bucket.Watch",
	"kv.Bucket.WatchFiltered":           "kv.Bucket.Watch",
	"kv.Bucket.ListKeys":                "kv.Bucket.Keys",
	"kv.Bucket.History":                 "kv.Bucket.Keys",
	"kv.Bucket.PurgeDeletes":            "kv.Bucket.Keys",
	"kv.Bucket.GetRevision":             "kv.Bucket.Get",
	"kv.Bucket.PutString":               "kv.Bucket.Put",
	"kv.Bucket.Create":                  "kv.Bucket.Put",
	"kv.Bucket.Update":                  "kv.Bucket.Put",
	"kv.Bucket.Delete":                  "kv.Bucket.Put",
	"kv.Bucket.Purge":                   "kv.Bucket.Put",
	"kv.Bucket.Status":                  "jsapi.JS.Stream",
	"objstore.Store.Get":                "objstore.Store.GetBytes",
	"objstore.Store.GetString":          "objstore.Store.GetBytes",
	"objstore.Store.GetFile":            "objstore.Store.GetBytes",
	"objstore.Store.Put":                "objstore.Store.PutBytes",
	"objstore.Store.PutString":          "objstore.Store.PutBytes",
	"objstore.Store.PutFile":            "objstore.Store.PutBytes",
	"objstore.Store.Delete":             "objstore.Store.PutBytes",
	"objstore.Store.UpdateMeta":         "objstore.Store.PutBytes",
	"objstore.Store.AddLink":            "objstore.Store.PutBytes",
	"objstore.Store.AddBucketLink":      "objstore.Store.PutBytes",
	"objstore.Store.Status":             "jsapi.JS.Stream",
	"pcgroup.CreateStatic":              "pcgroup.GetStatic",
	"pcgroup.CreateElastic":             "pcgroup.GetStatic",
	"pcgroup.GetElastic":                "pcgroup.GetStatic",
	"pcgroup.Delete":                    "pcgroup.GetStatic",
	"pcgroup.List":                      "pcgroup.GetStatic",
	"pcgroup.AddMembers":                "pcgroup.GetStatic",
	"pcgroup.DropMembers":               "pcgroup.GetStatic",
	"pcgroup.SetMappings":               "pcgroup.GetStatic",
	"pcgroup.DeleteMappings":            "pcgroup.GetStatic",
	"pcgroup.ActiveMembers":             "pcgroup.GetStatic",
	"pcgroup.StepDown":                  "pcgroup.GetStatic",
	"pcgroup.Join":                      "returns at once; its read ends with ctx like pcgroup.Messages",
	"pull.Consumer.ConsumeKeyed":        "returns at once; its read ends with ctx like pull.Consumer.Messages",
	"objstore.Store.Seal":               "jsapi.JS.Stream",
	"extra.PublishBatchSeq":             "extra.PublishBatch",
	"extra.BatchPublisher.Add":          "extra.PublishBatch",
	"extra.BatchPublisher.AddMsg":       "extra.PublishBatch",
	"extra.BatchPublisher.Commit":       "extra.PublishBatch",
	"extra.BatchPublisher.CommitMsg":    "extra.PublishBatch",
	"extra.BatchPublisher.CommitEOB":    "extra.PublishBatch",
	"extra.FastPublisher.AddMsg":        "extra.FastPublisher.Add",
	"extra.FastPublisher.Commit":        "extra.FastPublisher.Add",
	"extra.FastPublisher.CommitMsg":     "extra.FastPublisher.Add",
	"extra.FastPublisher.Close":         "extra.FastPublisher.Add",
	"extra.GetLastMsgsFor":              "extra.GetBatch",
	"sysapi.Client.Connz":               "sysapi.Client.Varz",
	"sysapi.Client.PingConnz":           "sysapi.Client.PingVarz",
	"sysapi.Client.Routez":              "sysapi.Client.Varz",
	"sysapi.Client.PingRoutez":          "sysapi.Client.PingVarz",
	"sysapi.Client.Gatewayz":            "sysapi.Client.Varz",
	"sysapi.Client.PingGatewayz":        "sysapi.Client.PingVarz",
	"sysapi.Client.Leafz":               "sysapi.Client.Varz",
	"sysapi.Client.PingLeafz":           "sysapi.Client.PingVarz",
	"sysapi.Client.Subsz":               "sysapi.Client.Varz",
	"sysapi.Client.PingSubsz":           "sysapi.Client.PingVarz",
	"sysapi.Client.Jsz":                 "sysapi.Client.Varz",
	"sysapi.Client.PingJsz":             "sysapi.Client.PingVarz",
	"sysapi.Client.Accountz":            "sysapi.Client.Varz",
	"sysapi.Client.PingAccountz":        "sysapi.Client.PingVarz",
	"sysapi.Client.Healthz":             "sysapi.Client.Varz",
	"sysapi.Client.PingHealthz":         "sysapi.Client.PingVarz",
	"sysapi.Client.Statsz":              "sysapi.Client.Varz",
	"sysapi.Client.PingStatsz":          "sysapi.Client.PingVarz",
	"sysapi.Client.Idz":                 "sysapi.Client.Varz",
	"sysapi.Client.Request":             "sysapi.Client.Varz",
	"sysapi.Client.PingIdz":             "sysapi.Client.PingVarz",
	"sysapi.Client.Ping":                "sysapi.Client.PingVarz",
	"sysapi.Client.PingRequest":         "sysapi.Client.PingVarz",
	"kv.CodecBucket.Put":                "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.PutString":          "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.Create":             "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.Update":             "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.Delete":             "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.Purge":              "kv.Bucket.Put (through the codecs)",
	"kv.CodecBucket.Get":                "kv.Bucket.Get (through the codecs)",
	"kv.CodecBucket.GetRevision":        "kv.Bucket.Get (through the codecs)",
	"kv.CodecBucket.History":            "kv.Bucket.Keys (through the codecs)",
	"kv.CodecBucket.Keys":               "kv.Bucket.Keys (through the codecs)",
	"kv.CodecBucket.ListKeys":           "kv.Bucket.Keys (through the codecs)",
	"kv.CodecBucket.Watch":              "kv.Bucket.Watch (through the codecs)",
	"kv.CodecBucket.WatchAll":           "kv.Bucket.Watch (through the codecs)",
	"kv.CodecBucket.WatchFiltered":      "kv.Bucket.Watch (through the codecs)",
	"kv.CodecBucket.Status":             "jsapi.JS.Stream (through the codecs)",
	"kv.CodecBucket.PurgeDeletes":       "kv.Bucket.Keys (through the codecs)",
}

// requestPath: the calls that are one JetStream API request (js.request),
// as jsapi.JS.Stream is.
var requestPath = []string{
	"jsapi.JS.CreateConsumer", "jsapi.JS.UpdateConsumer", "jsapi.JS.CreateOrUpdateConsumer",
	"jsapi.JS.Consumer", "jsapi.JS.DeleteConsumer", "jsapi.JS.ConsumerNames", "jsapi.JS.Consumers",
	"jsapi.JS.PauseConsumer", "jsapi.JS.ResumeConsumer", "jsapi.JS.ResetConsumer", "jsapi.JS.UnpinConsumer",
	"jsapi.Stream.DeleteMsg", "jsapi.Stream.SecureDeleteMsg", "jsapi.Stream.Info", "jsapi.Stream.Purge",
	"jsapi.JS.CreateStream", "jsapi.JS.UpdateStream", "jsapi.JS.CreateOrUpdateStream", "jsapi.JS.DeleteStream",
	"jsapi.JS.StreamNames", "jsapi.JS.Streams", "jsapi.JS.StreamNameBySubject",
	"kv.CreateBucket", "kv.UpdateBucket", "kv.CreateOrUpdateBucket", "kv.DeleteBucket", "kv.BucketNames", "kv.Buckets",
	"objstore.CreateStore", "objstore.UpdateStore", "objstore.CreateOrUpdateStore", "objstore.DeleteStore",
	"objstore.StoreNames", "objstore.Stores",
}

func init() {
	for _, name := range requestPath {
		sharedPath[name] = "jsapi.JS.Stream (one JetStream API request)"
	}
}

// TestDeadlineRuleListsEveryBlockingCall: every exported function and
// method of the public packages whose first parameter is a
// context.Context is either run by TestDeadlineRule or listed in
// sharedPath with the run call it waits like; and every name listed is
// such a call. The test logs the list.
func TestDeadlineRuleListsEveryBlockingCall(t *testing.T) {
	run := map[string]bool{}
	for _, c := range deadlineCalls(&deadlineEnv{}) {
		run[strings.TrimSuffix(c.name, " (JS Timeout of its own)")] = true
	}
	for name, via := range sharedPath {
		target, _, _ := strings.Cut(via, " ")
		if !run[target] && !strings.Contains(via, "returns at once") && !strings.Contains(via, "closes the connection") {
			t.Errorf("sharedPath[%s] = %q: %s is not run by TestDeadlineRule", name, via, target)
		}
	}
	found := map[string]bool{}
	for _, pkg := range publicPackages {
		for _, name := range ctxFirstCalls(t, pkg) {
			found[name] = true
		}
	}
	var missing, stale, all []string
	for name := range found {
		all = append(all, name)
		if !run[name] && sharedPath[name] == "" {
			missing = append(missing, name)
		}
	}
	for name := range run {
		if !found[name] {
			stale = append(stale, name)
		}
	}
	for name := range sharedPath {
		if !found[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	sort.Strings(all)
	if len(missing) > 0 {
		t.Errorf("blocking calls neither run by TestDeadlineRule nor in sharedPath: %s", strings.Join(missing, " "))
	}
	if len(stale) > 0 {
		t.Errorf("listed but not a ctx-first exported call: %s", strings.Join(stale, " "))
	}
	var ran []string
	for name := range run {
		ran = append(ran, name)
	}
	sort.Strings(ran)
	t.Logf("%d blocking calls; run: %s", len(all), strings.Join(ran, " "))
}

// ctxFirstCalls returns the exported functions and methods of exported
// types of the package in dir whose first parameter is a
// context.Context, as pkg.Func or pkg.Type.Method.
func ctxFirstCalls(t *testing.T, pkg string) []string {
	t.Helper()
	fset := token.NewFileSet()
	paths, err := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	var out []string
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || !fd.Name.IsExported() || !ctxFirst(fd.Type) {
				continue
			}
			name := pkg + "." + fd.Name.Name
			if fd.Recv != nil {
				recv := recvName(fd.Recv.List[0].Type)
				if !ast.IsExported(recv) {
					continue
				}
				name = pkg + "." + recv + "." + fd.Name.Name
			}
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func ctxFirst(ft *ast.FuncType) bool {
	if ft.Params == nil || len(ft.Params.List) == 0 {
		return false
	}
	sel, ok := ft.Params.List[0].Type.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == "context" && sel.Sel.Name == "Context"
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return recvName(x.X)
	}
	return ""
}
