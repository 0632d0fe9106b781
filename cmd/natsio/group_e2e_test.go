package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The group commands end to end: create an elastic group, manage its
// members and mappings, run two demo members that split the partitions,
// step one down, delete the group; a static group alongside.
func TestGroupCommands(t *testing.T) {
	t.Parallel()
	s := sharedServer(t)
	s.ok(t, "stream", "add", "GORDERS", "--subjects", "gorders.*.*")
	r := s.ok(t, "group", "create", "elastic", "GORDERS", "billing", "4", "--filter", "gorders.*.*=1")
	contains(t, r, "Elastic consumer group billing created on stream GORDERS with 4 partitions (stream GORDERS-billing)")
	s.fails(t, []string{"MAX_MEMBERS"}, "group", "create", "elastic", "GORDERS", "x", "zero")
	r = s.ok(t, "group", "add", "GORDERS", "billing", "m1", "m2")
	contains(t, r, "Members of billing: m1, m2")

	r = s.ok(t, "group", "ls", "GORDERS")
	contains(t, r, "GROUP", "billing", "elastic")
	info := decode[struct {
		Kind   string `json:"kind"`
		Config struct {
			MaxMembers uint     `json:"max_members"`
			Members    []string `json:"members"`
		} `json:"config"`
	}](t, s.ok(t, "--json", "group", "info", "GORDERS", "billing"))
	if info.Kind != "elastic" || info.Config.MaxMembers != 4 || strings.Join(info.Config.Members, ",") != "m1,m2" {
		t.Fatalf("info %+v", info)
	}

	// Two demo members split the partitions; each customer stays on one.
	m1 := s.start(t, "group", "consume", "GORDERS", "billing", "m1", "--count", "100")
	m2 := s.start(t, "group", "consume", "GORDERS", "billing", "m2", "--count", "100")
	m1.waitStderr(t, "Joined elastic group billing on GORDERS as m1")
	m2.waitStderr(t, "Joined elastic group billing on GORDERS as m2")
	for i := range 8 {
		s.ok(t, "pub", fmt.Sprintf("gorders.c%d.created", i), "hello")
	}
	for i := range 8 {
		want := fmt.Sprintf("gorders.c%d.created: hello", i)
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(m1.stdout.String()+m2.stdout.String(), want) {
			if time.Now().After(deadline) {
				t.Fatalf("no member printed %q\nm1:\n%s\nm2:\n%s", want, m1.stdout, m2.stdout)
			}
			time.Sleep(20 * time.Millisecond) // polling two processes' output

		}
		if strings.Contains(m1.stdout.String(), want) == strings.Contains(m2.stdout.String(), want) {
			t.Fatalf("%q printed by both or neither member", want)
		}
	}
	if m1.stdout.String() == "" || m2.stdout.String() == "" {
		t.Logf("one member got every customer (hash): m1 %q m2 %q", m1.stdout, m2.stdout)
	}
	r = s.ok(t, "group", "info", "GORDERS", "billing")
	contains(t, r, "m1: active", "m2: active", "Filter: gorders.*.* (partitioning wildcards [1])")
	s.ok(t, "group", "step-down", "GORDERS", "billing", "m1")

	// Mappings replace the members; unmap removes them.
	s.fails(t, []string{"MEMBER:P1,P2"}, "group", "map", "GORDERS", "billing", "m1")
	s.fails(t, []string{"partitions mapped"}, "group", "map", "GORDERS", "billing", "m1:0,1")
	s.ok(t, "group", "map", "GORDERS", "billing", "m1:0,1", "m2:2,3")
	r = s.ok(t, "group", "info", "GORDERS", "billing")
	contains(t, r, "m1: partitions [0 1]", "m2: partitions [2 3]")
	s.fails(t, []string{"member mappings"}, "group", "add", "GORDERS", "billing", "m3")
	s.ok(t, "group", "unmap", "GORDERS", "billing")

	// Deleting the group ends its members.
	s.ok(t, "group", "rm", "GORDERS", "billing", "--force")
	for _, p := range []*proc{m1, m2} {
		if res := p.wait(t, 30*time.Second); res.code != 0 {
			t.Fatalf("member after the group's deletion:\n%s", res)
		}
	}
	s.fails(t, []string{"no consumer group billing on stream GORDERS"}, "group", "info", "GORDERS", "billing")

	// A static group on a stream that partitions its subjects.
	cfgFile := filepath.Join(t.TempDir(), "stream.json")
	if err := os.WriteFile(cfgFile, []byte(`{"name":"GSTATIC","subjects":["gst.*"],"storage":"file","num_replicas":1,
		"subject_transform":{"src":"gst.*","dest":"{{partition(2,1)}}.gst.{{wildcard(1)}}"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s.ok(t, "stream", "add", "GSTATIC", "--config", cfgFile)
	s.ok(t, "group", "create", "static", "GSTATIC", "audit", "2", "--members", "a")
	s.ok(t, "pub", "gst.k1", "one")
	r = s.ok(t, "group", "consume", "GSTATIC", "audit", "a", "--count", "1")
	contains(t, r, "[a] #1 gst.k1: one")
	r = s.ok(t, "group", "ls", "GSTATIC")
	contains(t, r, "audit", "static")
	s.fails(t, []string{"not a member"}, "group", "consume", "GSTATIC", "audit", "zed")
}
