// Command rawceiling measures the ceiling of a pub/sub stream on a NATS
// server with the least client code that can be written: a publisher
// connection that writes pre-encoded PUB frames in large batches, and a
// subscriber connection whose reader finds each "MSG " line, takes the
// payload size from it and skips the payload. It shares no code with the
// bench's clients, so that it can tell whether the bench's raw client is
// a real ceiling: run both against one server, alternately, and compare.
//
//	go build -o /tmp/bs ./cmd/benchserver && /tmp/bs -stdin=false &   # prints URL and PID
//	go run ./cmd/rawceiling -url nats://127.0.0.1:PORT -size 16 -n 1000000 -rounds 3
//
// Each round publishes n messages and waits until the subscriber has
// counted all n; it prints one JSON line per round with the wall time and
// the CPU this process used (getrusage), which is the client's CPU. It
// checks every message's size and that exactly n arrive.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	rawURL := flag.String("url", "", "server URL (nats://host:port)")
	size := flag.Int("size", 16, "payload bytes")
	n := flag.Int("n", 1_000_000, "messages per round")
	warmup := flag.Int("warmup", 100_000, "messages before the first round")
	rounds := flag.Int("rounds", 1, "rounds")
	subject := flag.String("subject", "rawceiling."+strconv.Itoa(os.Getpid()), "subject")
	flag.Parse()
	if *size > 512<<10 {
		fmt.Fprintln(os.Stderr, "rawceiling: -size above 512 KiB does not fit the reader's buffer")
		os.Exit(2)
	}
	if err := run(os.Stdout, *rawURL, *subject, *size, *n, *warmup, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "rawceiling:", err)
		os.Exit(1)
	}
}

type result struct {
	Size     int     `json:"size"`
	N        int     `json:"n"`
	WallNs   int64   `json:"wall_ns"`
	CPUNs    int64   `json:"cli_cpu_ns"`
	MsgsPerS float64 `json:"msgs_per_s"`
	NsPerMsg float64 `json:"cli_ns_per_msg"`
}

func run(out io.Writer, rawURL, subject string, size, n, warmup, rounds int) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	pub, err := dial(u.Host)
	if err != nil {
		return err
	}
	sub, err := dial(u.Host)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(sub, "SUB %s 1\r\nPING\r\n", subject); err != nil {
		return err
	}
	if err := awaitPong(sub); err != nil {
		return err
	}
	var count, bad, want atomic.Int64
	reached := make(chan struct{}, 1)
	readErr := make(chan error, 1)
	go func() { readErr <- readMsgs(sub, size, &count, &bad, &want, reached) }()

	frame := []byte("PUB " + subject + " " + strconv.Itoa(size) + "\r\n" + string(bytes.Repeat([]byte{'x'}, size)) + "\r\n")
	batch := bytes.Repeat(frame, max(1, (256<<10)/len(frame)))
	perBatch := len(batch) / len(frame)
	publish := func(k int) error {
		for ; k >= perBatch; k -= perBatch {
			if _, err := pub.Write(batch); err != nil {
				return err
			}
		}
		_, err := pub.Write(batch[:k*len(frame)])
		return err
	}
	// await waits for the reader's signal that the count reached target
	// (want is set before the publishes that it counts).
	await := func(target int64) error {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		last := count.Load()
		for count.Load() < target {
			select {
			case err := <-readErr:
				return err
			case <-reached:
			case <-tick.C:
				if c := count.Load(); c == last {
					return fmt.Errorf("received %d of %d, none for 10 s", c, target)
				} else {
					last = c
				}
			}
		}
		return nil
	}
	var target int64
	if warmup > 0 {
		target += int64(warmup)
		want.Store(target)
		if err := publish(warmup); err != nil {
			return err
		}
		if err := await(target); err != nil {
			return err
		}
	}
	enc := json.NewEncoder(out)
	for range rounds {
		target += int64(n)
		want.Store(target)
		cpu0, t0 := cpuNs(), time.Now()
		if err := publish(n); err != nil {
			return err
		}
		if err := await(target); err != nil {
			return err
		}
		wall, cpu := time.Since(t0), cpuNs()-cpu0
		if c := count.Load(); c != target {
			return fmt.Errorf("received %d messages, want %d", c, target)
		}
		if b := bad.Load(); b != 0 {
			return fmt.Errorf("%d messages of a size other than %d", b, size)
		}
		_ = enc.Encode(result{Size: size, N: n, WallNs: wall.Nanoseconds(), CPUNs: cpu,
			MsgsPerS: float64(n) / wall.Seconds(), NsPerMsg: float64(cpu) / float64(n)})
	}
	pub.Close()
	sub.Close()
	return nil
}

// dial connects and completes the handshake: INFO, CONNECT, PING, PONG.
func dial(host string) (net.Conn, error) {
	c, err := net.DialTimeout("tcp", host, 10*time.Second)
	if err != nil {
		return nil, err
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReaderSize(c, 64<<10).ReadSlice('\n') // INFO: nothing follows it until CONNECT
	if err == nil && !bytes.HasPrefix(line, []byte("INFO ")) {
		err = fmt.Errorf("expected INFO, got %q", line)
	}
	if err == nil {
		_, err = c.Write([]byte(`CONNECT {"verbose":false,"pedantic":false,"protocol":1,"echo":true,"name":"rawceiling"}` + "\r\nPING\r\n"))
	}
	if err == nil {
		err = awaitPong(c)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	_ = c.SetReadDeadline(time.Time{})
	return c, nil
}

// awaitPong reads byte by byte up to "PONG\r\n" (only during set-up, when
// nothing else can arrive).
func awaitPong(c net.Conn) error {
	var got []byte
	b := make([]byte, 1)
	for !bytes.HasSuffix(got, []byte("PONG\r\n")) {
		if _, err := c.Read(b); err != nil {
			return err
		}
		got = append(got, b[0])
		if bytes.HasPrefix(got, []byte("-ERR")) && b[0] == '\n' {
			return errors.New(string(got))
		}
	}
	return nil
}

// readMsgs counts MSG frames: find "MSG ", the size is the number before
// the line's CRLF, skip the payload and its CRLF. One store per read.
func readMsgs(c net.Conn, size int, count, bad, want *atomic.Int64, reached chan<- struct{}) error {
	buf := make([]byte, 1<<20)
	var have int
	var local, localBad int64
	for {
		k, err := c.Read(buf[have:])
		if err != nil {
			return err
		}
		have += k
		p := 0
		for {
			rest := buf[p:have]
			eol := bytes.IndexByte(rest, '\n')
			if eol < 0 {
				break
			}
			if !bytes.HasPrefix(rest, []byte("MSG ")) {
				if bytes.HasPrefix(rest, []byte("PING")) {
					if _, err := c.Write([]byte("PONG\r\n")); err != nil {
						return err
					}
				} else if !bytes.HasPrefix(rest, []byte("PONG")) && !bytes.HasPrefix(rest, []byte("+OK")) && !bytes.HasPrefix(rest, []byte("INFO")) {
					return fmt.Errorf("unexpected %q", rest[:eol])
				}
				p += eol + 1
				continue
			}
			sp := bytes.LastIndexByte(rest[:eol], ' ')
			m := 0
			for _, d := range rest[sp+1 : eol-1] {
				if d < '0' || d > '9' || sp < 0 {
					return fmt.Errorf("bad MSG line %q", rest[:eol])
				}
				m = m*10 + int(d-'0')
			}
			end := eol + 1 + m + 2
			if end > len(rest) {
				break
			}
			if rest[end-2] != '\r' || rest[end-1] != '\n' {
				return errors.New("payload not followed by CRLF")
			}
			local++
			if m != size {
				localBad++
			}
			p += end
		}
		have = copy(buf, buf[p:have])
		bad.Store(localBad)
		count.Store(local)
		if local >= want.Load() {
			select {
			case reached <- struct{}{}:
			default:
			}
		}
	}
}

func cpuNs() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}
