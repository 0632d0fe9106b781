package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// configOf returns the "config" of `stream info --json` or `consumer info
// --json`.
func configOf(t *testing.T, s *testServer, args ...string) map[string]any {
	t.Helper()
	var v struct {
		Config map[string]any `json:"config"`
	}
	r := s.ok(t, append(args, "--json")...)
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, r)
	}
	return v.Config
}

// readJSON decodes a file written by --output.
func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return m
}

// want checks members of a JSON object, compared as their JSON.
func want(t *testing.T, what string, m map[string]any, kv map[string]string) {
	t.Helper()
	for k, v := range kv {
		b, _ := json.Marshal(m[k])
		if string(b) != v {
			t.Errorf("%s: %s is %s, want %s", what, k, b, v)
		}
	}
}

// TestStreamNatscliFlags: natscli's stream add/edit flags land in the
// configuration.
func TestStreamNatscliFlags(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	out := filepath.Join(t.TempDir(), "stream.json")
	s.ok(t, "stream", "add", "NF_OUT", "--subjects", "nfout.>", "--storage", "m", "--tag", "a", "--tag", "b", "--cluster", "east",
		"--first-sequence", "10", "--persist-mode", "async", "--republish-source", "nfout.>", "--republish-destination", "copy.>",
		"--republish-headers", "--transform-source", "nfout.>", "--transform-destination", "moved.>", "--limit-consumer-inactive", "1m",
		"--limit-consumer-max-pending", "10", "--allow-batch", "--allow-fast", "--allow-counter", "--allow-schedules", "--allow-msg-ttl",
		"--subject-del-markers-ttl", "1m", "--ack=false", "--no-allow-direct", "--allow-mirror-direct", "--output", out)
	want(t, "--output", readJSON(t, out), map[string]string{
		"storage": `"memory"`, "placement": `{"cluster":"east","tags":["a","b"]}`, "first_seq": "10", "persist_mode": `"async"`,
		"republish":         `{"dest":"copy.\u003e","headers_only":true,"src":"nfout.\u003e"}`,
		"subject_transform": `{"dest":"moved.\u003e","src":"nfout.\u003e"}`,
		"consumer_limits":   `{"inactive_threshold":60000000000,"max_ack_pending":10}`,
		"allow_atomic":      "true", "allow_batched": "true", "allow_msg_counter": "true", "allow_msg_schedules": "true",
		"allow_msg_ttl": "true", "subject_delete_marker_ttl": "60000000000", "no_ack": "true", "allow_direct": "null", "mirror_direct": "true",
	})
	r := s.ok(t, "stream", "add", "NF_VALID", "--subjects", "nfvalid.>", "--validate")
	contains(t, r, "Stream NF_VALID configuration is valid")
	s.fails(t, []string{"not found"}, "stream", "info", "NF_VALID")

	// On the server: a stream, its mirror and a stream sourcing it.
	s.ok(t, "stream", "add", "NF_ORIG", "--subjects", "nforig.>", "--first-sequence", "100", "--storage", "f")
	s.ok(t, "pub", "nforig.a", "x")
	want(t, "first-sequence", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"first_seq": "100", "storage": `"file"`})
	s.ok(t, "stream", "add", "NF_MIRROR", "--mirror", "NF_ORIG")
	want(t, "mirror", configOf(t, s, "stream", "info", "NF_MIRROR"), map[string]string{"mirror": `{"name":"NF_ORIG"}`})
	s.ok(t, "stream", "add", "NF_SRC", "--source", "NF_ORIG", "--subjects", "nfsrc")
	want(t, "source", configOf(t, s, "stream", "info", "NF_SRC"), map[string]string{"sources": `[{"name":"NF_ORIG"}]`})

	// Edit: republish on and off, a dry run, --config, the editor.
	s.ok(t, "stream", "edit", "NF_ORIG", "--republish-source", "nforig.>", "--republish-destination", "again.>", "-f")
	want(t, "edit republish", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"republish": `{"dest":"again.\u003e","src":"nforig.\u003e"}`})
	s.ok(t, "stream", "edit", "NF_ORIG", "--no-republish", "--no-allow-direct")
	want(t, "edit no republish", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"republish": "null", "allow_direct": "null"})
	r = s.ok(t, "stream", "edit", "NF_ORIG", "--max-msgs", "5", "--dry-run")
	contains(t, r, "- max_msgs: -1", "+ max_msgs: 5")
	want(t, "dry run", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"max_msgs": "-1"})
	cfg := configOf(t, s, "stream", "info", "NF_ORIG")
	cfg["description"] = "fromafile"
	b, _ := json.Marshal(cfg)
	file := filepath.Join(t.TempDir(), "edit.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "stream", "edit", "NF_ORIG", "--config", file, "--max-msgs", "7")
	want(t, "edit --config", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"description": `"fromafile"`, "max_msgs": "7"})
	r = startProcEnv(t, nil, []string{"EDITOR=sed -i s/fromafile/fromtheeditor/"}, s.args("stream", "edit", "NF_ORIG", "-i")...).wait(t, time.Minute)
	if r.code != 0 {
		t.Fatalf("edit -i:\n%s", r)
	}
	want(t, "edit -i", configOf(t, s, "stream", "info", "NF_ORIG"), map[string]string{"description": `"fromtheeditor"`})
	s.ok(t, "stream", "edit", "NF_MIRROR", "--no-mirror")
	want(t, "no mirror", configOf(t, s, "stream", "info", "NF_MIRROR"), map[string]string{"mirror": "null"})
}

// TestConsumerNatscliFlags: natscli's consumer add/edit flags, --wait (the
// ack wait) and --force among them, land in the configuration.
func TestConsumerNatscliFlags(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "NFC", "--subjects", "nfc.>")
	for i := 0; i < 3; i++ {
		s.ok(t, "pub", "nfc.a", "x")
	}
	s.ok(t, "consumer", "add", "NFC", "w1", "--wait", "45s", "--backoff", "linear", "--backoff-steps", "3", "--backoff-min", "1s",
		"--backoff-max", "4s", "--max-deliver", "5", "--deliver", "2", "--max-pull-batch", "10", "--max-pull-expire", "1m",
		"--max-pull-bytes", "1024", "--max-waiting", "7", "--sample", "50", "--replicas", "1", "--metadata", "team=x",
		"--pinned-groups", "g1", "--pinned-ttl", "30s", "--pause", "1h", "--max-outstanding", "77")
	c := configOf(t, s, "consumer", "info", "NFC", "w1")
	want(t, "w1", c, map[string]string{"backoff": "[1000000000,2000000000,3000000000]",
		"deliver_policy": `"by_start_sequence"`, "opt_start_seq": "2", "max_batch": "10", "max_expires": "60000000000",
		"max_bytes": "1024", "max_waiting": "7", "sample_freq": `"50%"`, "priority_groups": `["g1"]`,
		"priority_policy": `"pinned_client"`, "priority_timeout": "30000000000", "max_ack_pending": "77"})
	if m, _ := c["metadata"].(map[string]any); m["team"] != "x" {
		t.Errorf("metadata %v", c["metadata"])
	}
	if p, _ := c["pause_until"].(string); p == "" {
		t.Errorf("no pause_until: %v", c)
	}

	s.ok(t, "consumer", "add", "NFC", "w2", "--deliver", "subject", "--ack", "none", "--filter", "nfc.>")
	want(t, "deliver subject", configOf(t, s, "consumer", "info", "NFC", "w2"), map[string]string{"deliver_policy": `"last_per_subject"`})
	s.ok(t, "consumer", "add", "NFC", "w3", "--deliver", "1h", "--wait", "45s")
	want(t, "deliver 1h", configOf(t, s, "consumer", "info", "NFC", "w3"), map[string]string{"deliver_policy": `"by_start_time"`, "ack_wait": "45000000000"})

	// A push consumer and an ephemeral one.
	s.ok(t, "consumer", "add", "NFC", "push", "--target", "out.nfc", "--deliver-group", "q", "--heartbeat", "5s", "--flow-control", "--pull=false")
	want(t, "push", configOf(t, s, "consumer", "info", "NFC", "push"), map[string]string{"deliver_subject": `"out.nfc"`,
		"deliver_group": `"q"`, "idle_heartbeat": "5000000000", "flow_control": "true"})
	s.fails(t, []string{"--target"}, "consumer", "add", "NFC", "bad", "--deliver-group", "q")
	s.ok(t, "consumer", "add", "NFC", "eph", "--ephemeral", "--inactive-threshold", "1h")
	e := configOf(t, s, "consumer", "info", "NFC", "eph")
	if e["durable_name"] != nil || e["name"] != "eph" {
		t.Errorf("ephemeral: %v", e)
	}

	// --validate and --output create nothing.
	contains(t, s.ok(t, "consumer", "add", "NFC", "v", "--validate"), "Consumer NFC > v configuration is valid")
	out := filepath.Join(t.TempDir(), "c.json")
	s.ok(t, "consumer", "add", "NFC", "o", "--wait", "1m", "--output", out)
	want(t, "--output", readJSON(t, out), map[string]string{"durable_name": `"o"`, "ack_wait": "60000000000"})
	s.fails(t, []string{"not found"}, "consumer", "info", "NFC", "o")

	// Edit: --wait, -f, a dry run, --config and the editor, a negation.
	s.ok(t, "consumer", "edit", "NFC", "w3", "--wait", "1m", "-f")
	want(t, "edit --wait", configOf(t, s, "consumer", "info", "NFC", "w3"), map[string]string{"ack_wait": "60000000000"})
	r := s.ok(t, "consumer", "edit", "NFC", "w1", "--max-deliver", "9", "--dry-run")
	contains(t, r, "- max_deliver: 5", "+ max_deliver: 9")
	want(t, "dry run", configOf(t, s, "consumer", "info", "NFC", "w1"), map[string]string{"max_deliver": "5"})
	s.ok(t, "consumer", "add", "NFC", "h", "--headers-only")
	s.ok(t, "consumer", "edit", "NFC", "h", "--no-headers-only")
	want(t, "--no-headers-only", configOf(t, s, "consumer", "info", "NFC", "h"), map[string]string{"headers_only": "null"})
	cfg := configOf(t, s, "consumer", "info", "NFC", "h")
	cfg["description"] = "fromafile"
	b, _ := json.Marshal(cfg)
	file := filepath.Join(t.TempDir(), "c-edit.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "consumer", "edit", "NFC", "h", "--config", file)
	want(t, "edit --config", configOf(t, s, "consumer", "info", "NFC", "h"), map[string]string{"description": `"fromafile"`})
	r = startProcEnv(t, nil, []string{"EDITOR=sed -i s/fromafile/fromtheeditor/"}, s.args("consumer", "edit", "NFC", "h", "-i")...).wait(t, time.Minute)
	if r.code != 0 || !strings.Contains(r.stdout, "updated") {
		t.Fatalf("consumer edit -i:\n%s", r)
	}
	want(t, "edit -i", configOf(t, s, "consumer", "info", "NFC", "h"), map[string]string{"description": `"fromtheeditor"`})
}
