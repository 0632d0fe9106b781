package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// The kv commands with natscli's names and semantics.
func TestKVNatscliCommands(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "kv", "add", "kvn", "--history", "10")
	s.fails(t, []string{"already exists"}, "kv", "add", "kvn", "--history", "3")

	// create stores only when the key has no value.
	r := s.ok(t, "kv", "create", "kvn", "lock", "me")
	contains(t, r, "kvn > lock, revision 1")
	s.fails(t, []string{`key "lock" already has a value`}, "kv", "create", "kvn", "lock", "you")
	if r := runIn(t, "from stdin", s.args("kv", "create", "kvn", "piped")...); r.code != 0 {
		t.Fatalf("kv create from stdin:\n%s", r)
	}
	if r := s.ok(t, "kv", "get", "kvn", "piped", "--raw"); r.stdout != "from stdin" {
		t.Fatalf("kv get piped:\n%s", r)
	}

	// update compares the revision.
	s.ok(t, "kv", "put", "kvn", "color", "blue") // revision 3
	s.fails(t, []string{`key "color" is not at revision 1`}, "kv", "update", "kvn", "color", "red", "1")
	r = s.ok(t, "kv", "update", "kvn", "color", "red", "3")
	contains(t, r, "revision 4")

	// revert stores an old value again.
	r = s.ok(t, "kv", "revert", "kvn", "color", "3", "--force")
	contains(t, r, "Reverted kvn > color to revision 3: stored as revision 5")
	if r := s.ok(t, "kv", "get", "kvn", "color", "--raw"); r.stdout != "blue" {
		t.Fatalf("after revert:\n%s", r)
	}
	s.fails(t, []string{"no value at revision 99"}, "kv", "revert", "kvn", "color", "99", "--force")

	// watch --revision starts at that revision of the bucket.
	w := s.start(t, "kv", "watch", "kvn", "--revision", "4", "--count", "2")
	if r := w.wait(t, 20*time.Second); r.code != 0 || !strings.Contains(r.stdout, "(revision 4): red") || !strings.Contains(r.stdout, "(revision 5): blue") || strings.Contains(r.stdout, "revision 3)") {
		t.Fatalf("kv watch --revision 4:\n%s", r)
	}

	// purge removes the history.
	s.ok(t, "kv", "purge", "kvn", "color", "--force")
	r = s.ok(t, "kv", "history", "kvn", "color", "--json")
	if h := decode[[]jsonEntry](t, r); len(h) != 1 || h[0].Operation != "PURGE" {
		t.Fatalf("history after purge: %+v", h)
	}

	// info shows the bucket; del without KEY removes the bucket.
	r = s.ok(t, "kv", "info", "kvn")
	contains(t, r, "Bucket kvn:", "History: 10")
	if v := decode[map[string]any](t, s.ok(t, "kv", "info", "kvn", "--json")); v["bucket"] != "kvn" {
		t.Fatalf("kv info --json: %v", v)
	}
	s.ok(t, "kv", "del", "kvn", "lock")
	s.fails(t, []string{`key "lock" was deleted`}, "kv", "get", "kvn", "lock")
	s.ok(t, "kv", "del", "kvn", "--force")
	s.fails(t, []string{`bucket "kvn" not found`}, "kv", "info", "kvn")
}

// consumer pause, resume and report.
func TestConsumerPauseResumeReport(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "CPR", "--subjects", "cpr.>")
	s.ok(t, "pub", "--js", "cpr.a", "m{{.Count}}", "--count", "3")
	s.ok(t, "consumer", "add", "CPR", "w1")
	s.ok(t, "consumer", "add", "CPR", "w2", "--filter", "cpr.b")

	r := s.ok(t, "consumer", "pause", "CPR", "w1", "1h", "--force")
	contains(t, r, "Paused CPR > w1 until")
	ci := decode[struct {
		Paused bool `json:"paused"`
	}](t, s.ok(t, "consumer", "info", "CPR", "w1", "--json"))
	if !ci.Paused {
		t.Fatal("consumer not paused")
	}
	r = s.ok(t, "consumer", "report", "CPR")
	contains(t, r, "CONSUMER", "w1", "w2", "for ")
	s.fails(t, []string{"neither an RFC 3339 time nor a positive duration"}, "consumer", "pause", "CPR", "w1", "soon", "--force")

	r = s.ok(t, "consumer", "resume", "CPR", "w1", "--force")
	contains(t, r, "Consumer CPR > w1 resumed")
	ci = decode[struct {
		Paused bool `json:"paused"`
	}](t, s.ok(t, "consumer", "info", "CPR", "w1", "--json"))
	if ci.Paused {
		t.Fatal("consumer still paused")
	}
	rep := decode[[]map[string]any](t, s.ok(t, "consumer", "report", "CPR", "--json"))
	if len(rep) != 2 || rep[0]["name"] != "w1" || rep[0]["num_pending"].(float64) != 3 {
		t.Fatalf("consumer report --json: %v", rep)
	}
	s.fails(t, []string{`consumer "CPR > nope" not found`}, "consumer", "pause", "CPR", "nope", "1h", "--force")
}

// stream view, subjects, rmm and report.
func TestStreamNatscliCommands(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "SVR", "--subjects", "svr.>")
	s.ok(t, "pub", "--js", "svr.a", "a{{.Count}}", "--count", "3")
	s.ok(t, "pub", "--js", "svr.b", "b{{.Count}}", "--count", "2", "-H", "K:V")

	r := s.ok(t, "stream", "view", "SVR")
	contains(t, r, "[1]", "subject svr.a", "a1", "[5]", "K: V", "b2")
	if r := s.ok(t, "stream", "view", "SVR", "2", "--id", "3", "--raw"); r.stdout != "a3\nb1\n" {
		t.Fatalf("view 2 --id 3 --raw:\n%s", r)
	}
	if r := s.ok(t, "stream", "view", "SVR", "--subject", "svr.b", "--raw"); r.stdout != "b1\nb2\n" {
		t.Fatalf("view --subject:\n%s", r)
	}
	r = s.ok(t, "stream", "view", "SVR", "1", "--since", "1h", "--json")
	if m := decode[jsonMsg](t, r); m.Sequence != 1 || *m.Data != "a1" {
		t.Fatalf("view --since --json: %+v", m)
	}

	r = s.ok(t, "stream", "subjects", "SVR")
	contains(t, r, "svr.a", "3", "svr.b", "2")
	if r := s.ok(t, "stream", "subjects", "SVR", "--sort", "count", "--names"); r.stdout != "svr.b\nsvr.a\n" {
		t.Fatalf("subjects --sort count --names:\n%s", r)
	}
	if r := s.ok(t, "stream", "subjects", "SVR", "svr.b", "--names"); r.stdout != "svr.b\n" {
		t.Fatalf("subjects FILTER:\n%s", r)
	}

	r = s.ok(t, "stream", "rmm", "SVR", "2", "--force")
	contains(t, r, "Removed message 2 from stream SVR")
	s.fails(t, []string{"no message with sequence 2"}, "stream", "get", "SVR", "2")
	s.fails(t, []string{"no message with sequence 2"}, "stream", "rmm", "SVR", "2", "--force")

	r = s.ok(t, "stream", "report")
	contains(t, r, "STREAM", "SVR", "DELETED")
	rep := decode[[]map[string]any](t, s.ok(t, "stream", "report", "--subject", "svr.>", "--json"))
	if len(rep) != 1 {
		t.Fatalf("stream report --json: %v", rep)
	}
	// edit keeps what it does not name.
	s.ok(t, "stream", "edit", "SVR", "--description", "edited")
	r = s.ok(t, "stream", "info", "SVR")
	contains(t, r, "edited", "svr.>")
}

// --version, pub -J, sub --stream.
func TestVersionAndJetStreamFlags(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	r := ok(t, "--version")
	if !strings.HasPrefix(r.stdout, "natsio version ") {
		t.Fatalf("--version:\n%s", r)
	}
	s.ok(t, "stream", "add", "VJS", "--subjects", "vjs.>")
	r = s.ok(t, "pub", "-J", "vjs.a", "one")
	contains(t, r, "stream VJS, sequence 1")
	s.ok(t, "pub", "--jetstream", "vjs.b", "two")

	// sub --stream reads what the stream holds, then new messages.
	sub := s.start(t, "sub", "--stream", "VJS", "--count", "3", "--raw")
	sub.waitStdout(t, "two")
	s.ok(t, "pub", "-J", "vjs.c", "three")
	if r := sub.wait(t, 20*time.Second); r.code != 0 || r.stdout != "one\ntwo\nthree\n" {
		t.Fatalf("sub --stream:\n%s", r)
	}
	// With a subject, only that subject; --new skips what is stored.
	r = s.ok(t, "sub", "vjs.b", "--stream", "VJS", "--count", "1", "--raw")
	if r.stdout != "two\n" {
		t.Fatalf("sub SUBJECT --stream:\n%s", r)
	}
}

// object watch and seal.
func TestObjectWatchSeal(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	dir := t.TempDir()
	src := dir + "/a.txt"
	if err := os.WriteFile(src, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "object", "add", "ows")
	s.ok(t, "object", "put", "ows", src, "--name", "first", "-H", "Color:blue")
	r0 := s.ok(t, "object", "info", "ows", "first")
	contains(t, r0, "Header Color: blue")

	w := s.start(t, "object", "watch", "ows", "--count", "3")
	w.waitStderr(t, "initial values done")
	w.waitStdout(t, "PUT ows > first")
	s.ok(t, "object", "put", "ows", src, "--name", "second")
	s.ok(t, "object", "rm", "ows", "first", "--force")
	r := w.wait(t, 20*time.Second)
	if r.code != 0 {
		t.Fatalf("object watch:\n%s", r)
	}
	contains(t, r, "PUT ows > second (5 B)", "DEL ows > first")

	r = s.ok(t, "object", "seal", "ows", "--force")
	contains(t, r, "Object store ows sealed")
	if st := decode[map[string]any](t, s.ok(t, "object", "info", "ows", "--json")); st["sealed"] != true {
		t.Fatalf("after seal: %v", st)
	}
	s.fails(t, []string{`object store "ows" is sealed`}, "object", "put", "ows", src, "--name", "third")
}

// Lines of nats CLI scripts work as they are.
func TestNatscliScriptLines(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "NSL", "--subjects", "nsl.>", "--defaults", "--retention", "work", "--storage", "memory")
	si := decode[struct {
		Config struct {
			Retention string `json:"retention"`
		} `json:"config"`
	}](t, s.ok(t, "stream", "info", "NSL", "--json"))
	if si.Config.Retention != "workqueue" {
		t.Fatalf("--retention work gave %q", si.Config.Retention)
	}
	s.ok(t, "consumer", "add", "NSL", "c", "--pull", "--defaults", "--ack", "explicit", "--filter", "nsl.a")
	s.fails(t, []string{"pull consumers only"}, "consumer", "add", "NSL", "push", "--pull=false")
	s.ok(t, "kv", "add", "nslkv", "--max-bucket-size", "1MiB", "--history", "2")
	st := decode[map[string]any](t, s.ok(t, "kv", "info", "nslkv", "--json"))
	if cfg := st["stream"].(map[string]any)["config"].(map[string]any); cfg["max_bytes"].(float64) != 1<<20 {
		t.Fatalf("--max-bucket-size: %v", cfg["max_bytes"])
	}
}
