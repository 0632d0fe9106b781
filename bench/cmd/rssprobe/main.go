// Command rssprobe measures the peak resident memory of a victim
// connection under a hostile publishing pattern from another tenant, beside
// the victim's configured pending bound (ConnectionPendingLimit).
//
// It starts an embedded nats-server, runs the victim in a child process
// (itself, with -victim), and publishes from this process until the
// victim's queues are full and it has dropped -drops messages. The victim
// reports its peak RSS (VmHWM) and what its queues count.
//
// Patterns:
//
//	interleaved  subscriptions a.> (full: dropping) and b.> (not read); 127
//	             empty messages to a.x, then one to b.<long token>, repeated
//	flood        one subscription f.> (not read); 1 KiB messages to f.x
//
// Usage: go run ./cmd/rssprobe -pattern interleaved -bound 64MiB
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/natsio/natsio/conn"
	"github.com/natsio/natsio/natstest"
)

var (
	pattern = flag.String("pattern", "interleaved", "interleaved or flood")
	bound   = flag.Int("bound", 64<<20, "the victim's connection pending limit, bytes")
	drops   = flag.Uint64("drops", 200000, "messages the victim must have dropped once full")
	victim  = flag.Bool("victim", false, "run as the victim (internal)")
	url     = flag.String("url", "", "server URL (victim)")
)

// bSubject is long so that each kept message counts (and costs) more than
// its Msg: fewer messages fill the bound.
var bSubject = "b." + strings.Repeat("k", 96)

func main() {
	flag.Parse()
	if *victim {
		runVictim()
		return
	}
	s, err := natstest.Start(natstest.JetStream(false))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Shutdown()
	ctx := context.Background()
	pub, err := conn.Connect(ctx, s.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer pub.Close()

	cmd := exec.Command(os.Args[0], "-victim", "-url", s.URL(), "-pattern", *pattern,
		"-bound", strconv.Itoa(*bound), "-drops", strconv.FormatUint(*drops, 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		log.Fatalf("victim did not start: %q", lines.Text())
	}
	done := make(chan string, 1)
	go func() {
		var last string
		for lines.Scan() {
			last = lines.Text()
		}
		done <- last
	}()
	start := time.Now()
	data := make([]byte, 1024)
	var sent uint64
publish:
	for {
		select {
		case res := <-done:
			_ = cmd.Wait()
			fmt.Printf("pattern %s: %s; %d messages published in %.1fs\n", *pattern, res, sent, time.Since(start).Seconds())
			break publish
		default:
		}
		for range 64 {
			switch *pattern {
			case "flood":
				_ = pub.Publish("f.x", data)
				sent++
			default:
				for range 127 {
					_ = pub.Publish("a.x", nil)
				}
				_ = pub.Publish(bSubject, nil)
				sent += 128
			}
		}
	}
}

func runVictim() {
	ctx := context.Background()
	nc, err := conn.Connect(ctx, *url, conn.PendingLimits(1<<30, *bound), conn.ConnectionPendingLimit(*bound))
	if err != nil {
		log.Fatal(err)
	}
	defer nc.Close()
	var subs []*conn.Subscription
	switch *pattern {
	case "flood":
		f, _ := nc.Subscribe("f.>")
		subs = append(subs, f)
	default:
		a, _ := nc.Subscribe("a.>")
		b, _ := nc.Subscribe("b.>")
		_ = a.SetPendingLimits(1<<30, *bound/8)
		subs = append(subs, a, b)
	}
	if err := nc.Flush(ctx); err != nil {
		log.Fatal(err)
	}
	fmt.Println("ready")
	limit := uint64(4 << 30) // stop there: the bound is long broken
	for {
		time.Sleep(50 * time.Millisecond)
		last := subs[len(subs)-1]
		rss := status("VmRSS")
		if last.Dropped() >= *drops || rss > limit {
			counted := 0
			for _, s := range subs {
				_, b := s.Pending()
				counted += b
			}
			peak := status("VmHWM")
			allowed := uint64(*bound)*5/4 + 64<<20
			fmt.Printf("peak RSS %.1f MiB, bound %.1f MiB, allowed 1.25×bound+64 MiB = %.1f MiB, counted %.1f MiB, dropped %d",
				mib(peak), mib(uint64(*bound)), mib(allowed), mib(uint64(counted)), nc.Stats().Dropped)
			fmt.Println()
			return
		}
	}
}

// status reads a size field (kB) of /proc/self/status, in bytes.
func status(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n << 10
		}
	}
	return 0
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
