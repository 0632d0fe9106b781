package clients

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// The JetStream and KV scenarios with the raw client: pre-encoded frames
// where the frame is fixed, frames encoded into one buffer where a reply
// token or ack subject varies, inline reads on the calling goroutine
// (a reader goroutine only for the async publish window). It checks what
// it must to count exactly (ack sequences, payload sizes, statuses) and
// nothing else. It has no object store implementation.

// rawSeq makes raw inboxes and batch IDs unique within the process.
var rawSeq atomic.Uint64

func rawToken() string {
	return strconv.FormatInt(time.Now().UnixNano(), 36) + strconv.FormatUint(rawSeq.Add(1), 36)
}

// rawJS is a raw connection subscribed to "<inbox>.>" with SID 1: every
// reply (acks, API replies, pulled messages) arrives there.
type rawJS struct {
	rc    *rawConn
	inbox string
	reply []byte // reply subject buffer for Reader.Next
	out   []byte // frames waiting to be written
}

func rawJSConnect(ctx context.Context, cfg Config, name string) (*rawJS, error) {
	rc, err := dialRaw(ctx, cfg.URL, name)
	if err != nil {
		return nil, err
	}
	j := &rawJS{rc: rc, inbox: "_INBOX.raw." + rawToken(), out: make([]byte, 0, 2*rawMinWrite)}
	if err := rc.subscribe(j.inbox+".>", 1); err != nil {
		rc.c.Close()
		return nil, err
	}
	return j, nil
}

func (j *rawJS) Close() error { return j.rc.c.Close() }

// arm bounds the next blocking reads.
func (j *rawJS) arm() { _ = j.rc.c.SetReadDeadline(time.Now().Add(rawIOTimeout)) }

// flush writes the buffered frames.
func (j *rawJS) flush() error {
	if len(j.out) == 0 {
		return nil
	}
	_, err := j.rc.c.Write(j.out)
	j.out = j.out[:0]
	return err
}

// read returns the next MSG or HMSG (with its payload in Op.Data),
// answering PINGs and failing on -ERR.
func (j *rawJS) read() (Op, error) {
	for {
		op, err := j.rc.rd.NextData(j.reply)
		if err != nil {
			return op, err
		}
		switch op.Kind {
		case OpMsg, OpHMsg:
			j.reply = op.Reply[:0]
			return op, nil
		case OpPing:
			if _, err := j.rc.c.Write([]byte("PONG\r\n")); err != nil {
				return op, err
			}
		case OpErr:
			return op, fmt.Errorf("raw: server error %s", op.Text)
		}
	}
}

// request writes frame and returns the reply.
func (j *rawJS) request(frame []byte) (Op, error) {
	j.arm()
	if _, err := j.rc.c.Write(frame); err != nil {
		return Op{}, err
	}
	return j.read()
}

// sync writes the buffered frames and a PING and waits for the PONG:
// everything written before has been processed by the server.
func (j *rawJS) sync() error {
	j.out = append(j.out, "PING\r\n"...)
	if err := j.flush(); err != nil {
		return err
	}
	j.arm()
	for {
		op, err := j.rc.rd.NextData(j.reply)
		if err != nil {
			return err
		}
		switch op.Kind {
		case OpPong:
			return nil
		case OpPing:
			if _, err := j.rc.c.Write([]byte("PONG\r\n")); err != nil {
				return err
			}
		case OpErr:
			return fmt.Errorf("raw: server error %s", op.Text)
		case OpMsg, OpHMsg:
			return fmt.Errorf("raw: unexpected message %s", excerpt(op.Data))
		}
	}
}

func excerpt(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return strconv.Quote(string(b))
}

// ackSeq checks a PubAck and returns its sequence.
func ackSeq(op Op) (uint64, error) {
	if op.Kind != OpMsg {
		return 0, fmt.Errorf("status reply instead of an ack: %s", excerpt(op.Data))
	}
	seq, ok := jsonUint(op.Data, "seq")
	if !ok || bytes.Contains(op.Data, []byte(`"error"`)) {
		return 0, fmt.Errorf("not an ack: %s", excerpt(op.Data))
	}
	return seq, nil
}

// --- jspub.sync and kvput: one request at a time, frames pre-encoded ---

type rawSeqPub struct {
	*rawJS
	frames [][]byte // cycled
	next   int
	seq    uint64
}

// NewJSPublishSync implements JSSyncPublisher: PUB with a reply inbox,
// then read the ack MSG.
func (Raw) NewJSPublishSync(ctx context.Context, cfg Config) (LatencyRunner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-jspub")
	if err != nil {
		return nil, err
	}
	return &rawSeqPub{rawJS: j, frames: [][]byte{AppendPub(nil, cfg.Subject, j.inbox+".r", Payload(cfg.Size))}}, nil
}

// NewKVPut implements KVPutter: PUB to $KV.<bucket>.<key> with a reply
// inbox, then read the ack MSG.
func (Raw) NewKVPut(ctx context.Context, cfg Config) (LatencyRunner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-kvput")
	if err != nil {
		return nil, err
	}
	p := &rawSeqPub{rawJS: j}
	data := Payload(cfg.Size)
	for i := range cfg.Keys {
		p.frames = append(p.frames, AppendPub(nil, "$KV."+cfg.Bucket+"."+KVKey(i), j.inbox+".r", data))
	}
	return p, nil
}

func (p *rawSeqPub) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	for i := range lat {
		t0 := time.Now()
		op, err := p.request(p.frames[p.next])
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		seq, err := ackSeq(op)
		if err != nil {
			return fmt.Errorf("publish %d: %w", i, err)
		}
		if !nextSeq(i, p.seq, seq) {
			return fmt.Errorf("ack of sequence %d after %d", seq, p.seq)
		}
		p.seq = seq
		p.next = (p.next + 1) % len(p.frames)
	}
	return nil
}

// --- kvget and directget: one request at a time, frames pre-encoded ---

type rawGet struct {
	*rawJS
	frames [][]byte
	next   int
	size   int
}

// NewKVGet implements KVGetter: a direct get request to
// $JS.API.DIRECT.GET.KV_<b>.$KV.<b>.<key>.
func (Raw) NewKVGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-kvget")
	if err != nil {
		return nil, err
	}
	g := &rawGet{rawJS: j, size: cfg.Size}
	for i := range cfg.Keys {
		g.frames = append(g.frames, AppendPub(nil, "$JS.API.DIRECT.GET.KV_"+cfg.Bucket+".$KV."+cfg.Bucket+"."+KVKey(i), j.inbox+".r", nil))
	}
	return g, nil
}

// NewDirectGet implements DirectGetter: {"seq":N} to
// $JS.API.DIRECT.GET.<stream>.
func (Raw) NewDirectGet(ctx context.Context, cfg Config) (LatencyRunner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-directget")
	if err != nil {
		return nil, err
	}
	g := &rawGet{rawJS: j, size: cfg.Size}
	for seq := 1; seq <= cfg.Stored; seq++ {
		g.frames = append(g.frames, AppendPub(nil, "$JS.API.DIRECT.GET."+cfg.Stream, j.inbox+".r", []byte(`{"seq":`+strconv.Itoa(seq)+`}`)))
	}
	return g, nil
}

func (g *rawGet) Run(lat []time.Duration) error {
	if len(lat) == 0 {
		return errShortLatency
	}
	for i := range lat {
		t0 := time.Now()
		op, err := g.request(g.frames[g.next])
		if err != nil {
			return fmt.Errorf("get %d: %w", i, err)
		}
		lat[i] = time.Since(t0)
		if op.Kind != OpHMsg || op.Size-op.HdrLen != g.size {
			return fmt.Errorf("get %d: reply %s, want a value of %d bytes", i, excerpt(op.Data), g.size)
		}
		g.next = (g.next + 1) % len(g.frames)
	}
	return nil
}

// --- jspub.async: pipelined PUBs, one reply token per message ---

type rawJSPubAsync struct {
	*rawJS
	prefix  []byte // "PUB <subject> <inbox>."
	suffix  []byte // " <size>\r\n<payload>\r\n"
	window  int64
	chunk   int
	seq     uint64 // reply tokens
	sent    int64
	acked   atomic.Int64
	waiting atomic.Bool
	wake    chan struct{}
	async   errAsync
	closing atomic.Bool
	done    chan struct{}
	timer   *time.Timer
}

// NewJSPublishAsync implements JSAsyncPublisher: PUBs with reply
// "<inbox>.<n>" (a fresh token per message under one wildcard
// subscription), written in 64 KiB writes while fewer than cfg.Window acks
// are outstanding; a reader goroutine counts the acks.
func (Raw) NewJSPublishAsync(ctx context.Context, cfg Config) (Runner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-jspub-async")
	if err != nil {
		return nil, err
	}
	p := &rawJSPubAsync{rawJS: j, window: int64(cfg.Window), wake: make(chan struct{}, 1), done: make(chan struct{})}
	p.prefix = []byte("PUB " + cfg.Subject + " " + j.inbox + ".")
	p.suffix = append(append(strconv.AppendInt([]byte{' '}, int64(cfg.Size), 10), "\r\n"...), Payload(cfg.Size)...)
	p.suffix = append(p.suffix, "\r\n"...)
	p.chunk = max(1, rawMinWrite/(len(p.prefix)+8+len(p.suffix)))
	p.timer = time.NewTimer(time.Hour)
	p.timer.Stop()
	go p.readAcks()
	return p, nil
}

func (p *rawJSPubAsync) signal() {
	if p.waiting.Load() {
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}
}

func (p *rawJSPubAsync) readAcks() {
	defer close(p.done)
	var reply []byte
	for {
		op, err := p.rc.rd.NextData(reply)
		if err != nil {
			if !p.closing.Load() {
				p.async.set(err)
				p.waiting.Store(true)
				p.signal()
			}
			return
		}
		switch op.Kind {
		case OpMsg, OpHMsg:
			reply = op.Reply[:0]
			if _, err := ackSeq(op); err != nil {
				p.async.set(err)
			}
			p.acked.Add(1)
			p.signal()
		case OpPing:
			if _, err := p.rc.c.Write([]byte("PONG\r\n")); err != nil && !p.closing.Load() {
				p.async.set(err)
			}
		case OpErr:
			p.async.set(fmt.Errorf("raw: server error %s", op.Text))
			p.waiting.Store(true)
			p.signal()
		}
	}
}

// waitAcked waits until at least v acks have arrived.
func (p *rawJSPubAsync) waitAcked(v int64) error {
	for p.acked.Load() < v {
		if err := p.async.get(); err != nil {
			return err
		}
		p.waiting.Store(true)
		if p.acked.Load() >= v {
			p.waiting.Store(false)
			break
		}
		p.timer.Reset(stallTimeout)
		select {
		case <-p.wake:
		case <-p.timer.C:
			p.waiting.Store(false)
			return fmt.Errorf("%d of %d acks after %v without progress", p.acked.Load(), v, stallTimeout)
		}
		p.timer.Stop()
		p.waiting.Store(false)
	}
	return p.async.get()
}

func (p *rawJSPubAsync) Run(n int) error {
	target := p.sent + int64(n)
	for p.sent < target {
		k := min(int64(p.chunk), target-p.sent)
		if err := p.waitAcked(p.sent + k - p.window); err != nil {
			return err
		}
		out := p.out[:0]
		for range k {
			p.seq++
			out = append(out, p.prefix...)
			out = strconv.AppendUint(out, p.seq, 10)
			out = append(out, p.suffix...)
		}
		p.out = out
		if err := p.flush(); err != nil {
			return err
		}
		p.sent += k
	}
	return p.waitAcked(target)
}

func (p *rawJSPubAsync) Close() error {
	p.closing.Store(true)
	err := p.rc.c.Close()
	<-p.done
	return err
}

// --- jsfetch / jsconsume / jsordered: pulls and acks on one goroutine ---

type rawPullMode uint8

const (
	rawFetch   rawPullMode = iota // one pull of Batch at a time
	rawConsume                    // Batch kept requested, refilled at half
	rawOrdered                    // as consume, on an AckNone consumer created in the run
)

type rawPull struct {
	*rawJS
	mode      rawPullMode
	stream    string
	consumers []string
	starts    []uint64
	size      int
	batch     int
	runs      int
	pullSubj  string
	ack       bool
}

var rawAck = []byte("+ACK")

func rawPullConnect(ctx context.Context, cfg Config, name string, mode rawPullMode) (*rawPull, error) {
	j, err := rawJSConnect(ctx, cfg, name)
	if err != nil {
		return nil, err
	}
	return &rawPull{rawJS: j, mode: mode, stream: cfg.Stream, consumers: cfg.Consumers, starts: cfg.StartSeqs,
		size: cfg.Size, batch: cfg.Batch, ack: mode != rawOrdered}, nil
}

// NewJSFetch implements JSFetcher: a pull request {"batch":500} to
// $JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>, read the 500 messages,
// then write their +ACKs together with the next pull.
func (Raw) NewJSFetch(ctx context.Context, cfg Config) (Runner, error) {
	return rawPullConnect(ctx, cfg, "bench-raw-jsfetch", rawFetch)
}

// NewJSConsume implements JSConsumer: cfg.Batch requested at first, and
// whenever half of it has arrived, the +ACKs so far and a pull for the
// other half.
func (Raw) NewJSConsume(ctx context.Context, cfg Config) (Runner, error) {
	return rawPullConnect(ctx, cfg, "bench-raw-jsconsume", rawConsume)
}

// NewJSOrdered implements JSOrderedReader: create an AckNone ephemeral
// consumer (the configuration natsio's ordered consumer uses) from the
// run's start sequence, then pull as jsconsume without acks.
func (Raw) NewJSOrdered(ctx context.Context, cfg Config) (Runner, error) {
	return rawPullConnect(ctx, cfg, "bench-raw-jsordered", rawOrdered)
}

// pull appends a pull request for b messages.
func (p *rawPull) pull(b int) {
	var body [64]byte
	req := strconv.AppendInt(append(body[:0], `{"batch":`...), int64(b), 10)
	req = append(req, `,"expires":30000000000}`...)
	p.out = AppendPub(p.out, p.pullSubj, p.inbox+".m", req)
}

func (p *rawPull) Run(n int) error {
	switch p.mode {
	case rawOrdered:
		start, err := runIndex(p.starts, p.runs)
		if err != nil {
			return err
		}
		if err := p.createOrdered(start); err != nil {
			return err
		}
	default:
		name, err := runIndex(p.consumers, p.runs)
		if err != nil {
			return err
		}
		p.pullSubj = "$JS.API.CONSUMER.MSG.NEXT." + p.stream + "." + name
	}
	p.runs++
	if n <= 0 {
		return nil
	}
	requested, got := 0, 0
	for got < n {
		outstanding := requested - got
		pulled := false
		switch {
		case p.mode == rawFetch && outstanding == 0:
			b := min(p.batch, n-requested)
			p.pull(b)
			requested += b
			pulled = true
		case p.mode != rawFetch && requested < n && outstanding <= p.batch/2:
			b := min(p.batch-outstanding, n-requested)
			p.pull(b)
			requested += b
			pulled = true
		}
		if pulled || len(p.out) >= rawMinWrite {
			if err := p.flush(); err != nil {
				return err
			}
			p.arm()
		}
		op, err := p.read()
		if err != nil {
			return fmt.Errorf("after %d of %d messages: %w", got, n, err)
		}
		if op.Kind != OpMsg {
			return fmt.Errorf("after %d of %d messages: status %s", got, n, excerpt(op.Data))
		}
		if op.Size != p.size {
			return fmt.Errorf("message of %d bytes, want %d", op.Size, p.size)
		}
		if p.ack {
			p.out = AppendPub(p.out, op.Reply, "", rawAck)
		}
		got++
	}
	if p.ack {
		return p.sync() // the acks have reached the server
	}
	return p.flush()
}

// createOrdered creates the run's AckNone consumer and points the pulls
// at it.
func (p *rawPull) createOrdered(start uint64) error {
	name := "raw_ord_" + rawToken()
	body := `{"stream_name":"` + p.stream + `","config":{"name":"` + name +
		`","deliver_policy":"by_start_sequence","opt_start_seq":` + strconv.FormatUint(start, 10) +
		`,"ack_policy":"none","max_deliver":1,"replay_policy":"instant","mem_storage":true,"num_replicas":1,"inactive_threshold":300000000000}}`
	op, err := p.request(AppendPub(nil, "$JS.API.CONSUMER.CREATE."+p.stream+"."+name, p.inbox+".c", []byte(body)))
	if err != nil {
		return fmt.Errorf("consumer create: %w", err)
	}
	if op.Kind != OpMsg || bytes.Contains(op.Data, []byte(`"error"`)) || !bytes.Contains(op.Data, []byte(`"name":"`+name+`"`)) {
		return fmt.Errorf("consumer create: %s", excerpt(op.Data))
	}
	p.pullSubj = "$JS.API.CONSUMER.MSG.NEXT." + p.stream + "." + name
	return nil
}

// --- getbatch ---

type rawGetBatch struct {
	*rawJS
	stream string
	batch  int
	size   int
}

// NewGetBatch implements BatchGetter: {"batch":N,"seq":1} to
// $JS.API.DIRECT.GET.<stream>, read N messages and the 204 end-of-batch
// status.
func (Raw) NewGetBatch(ctx context.Context, cfg Config) (Runner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-getbatch")
	if err != nil {
		return nil, err
	}
	return &rawGetBatch{rawJS: j, stream: cfg.Stream, batch: cfg.Batch, size: cfg.Size}, nil
}

func (g *rawGetBatch) Run(n int) error {
	for got := 0; got < n; {
		want := min(g.batch, n-got)
		body := `{"batch":` + strconv.Itoa(want) + `,"seq":1}`
		g.out = AppendPub(g.out, "$JS.API.DIRECT.GET."+g.stream, g.inbox+".g", []byte(body))
		if err := g.flush(); err != nil {
			return err
		}
		g.arm()
		for k := 0; ; k++ {
			op, err := g.read()
			if err != nil {
				return fmt.Errorf("batch get after %d of %d: %w", k, want, err)
			}
			if op.Kind != OpHMsg {
				return fmt.Errorf("batch get: unexpected reply %s", excerpt(op.Data))
			}
			if op.Size == op.HdrLen { // a status: the end of the batch
				if !bytes.HasPrefix(op.Data, []byte("NATS/1.0 204")) || k != want {
					return fmt.Errorf("batch get ended after %d of %d: %s", k, want, excerpt(op.Data))
				}
				break
			}
			if k == want || op.Size-op.HdrLen != g.size {
				return fmt.Errorf("batch get: message %d of %d bytes, want %d of %d", k+1, op.Size-op.HdrLen, want, g.size)
			}
			if k%1000 == 999 {
				g.arm()
			}
		}
		got += want
	}
	return nil
}

// --- fastpub ---

// Fast-ingest defaults of the natsio publisher, which the raw client
// mirrors: a flow acknowledgement every 100 messages, at most 2 flow
// intervals unacknowledged.
const (
	rawFastFlow   = 100
	rawFastMaxOut = 2
)

type rawFastPub struct {
	*rawJS
	subject string
	payload []byte
	prefix  []byte // "<inbox>.<batch>.<flow>.fail."
	reply   []byte
	flow    uint64
	lastAck uint64
	started bool // the first flow ack (of sequence 0) arrived
	final   []byte
}

// NewFastPublish implements FastPublisher: PUBs with reply
// "<inbox>.<batch>.<flow>.fail.<seq>.<op>.$FI", the first waiting for the
// first flow ack, the others within the flow window (acks read inline),
// the last one committing; the final PubAck must count every message.
func (Raw) NewFastPublish(ctx context.Context, cfg Config) (Runner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-fastpub")
	if err != nil {
		return nil, err
	}
	return &rawFastPub{rawJS: j, subject: cfg.Subject, payload: Payload(cfg.Size)}, nil
}

func (p *rawFastPub) frame(seq uint64, op byte) {
	r := strconv.AppendUint(append(p.reply[:0], p.prefix...), seq, 10)
	r = append(r, '.', op)
	r = append(r, ".$FI"...)
	p.reply = r
	p.out = AppendPub(p.out, p.subject, r, p.payload)
}

// readReply reads one reply of the batch: a flow ack, or the final ack
// (kept in p.final).
func (p *rawFastPub) readReply() error {
	op, err := p.read()
	if err != nil {
		return err
	}
	if op.Kind != OpMsg {
		return fmt.Errorf("fast batch: status %s", excerpt(op.Data))
	}
	if bytes.HasPrefix(op.Data, []byte(`{"type":"ack"`)) {
		p.started = true
		if s, ok := jsonUint(op.Data, "seq"); ok && s > p.lastAck {
			p.lastAck = s
		}
		if m, ok := jsonUint(op.Data, "msgs"); ok && m > 0 {
			p.flow = m
		}
		return nil
	}
	if bytes.HasPrefix(op.Data, []byte(`{"type":`)) || bytes.Contains(op.Data, []byte(`"error"`)) {
		return fmt.Errorf("fast batch: %s", excerpt(op.Data))
	}
	p.final = append(p.final[:0], op.Data...)
	return nil
}

func (p *rawFastPub) Run(n int) error {
	if n <= 0 {
		return nil
	}
	p.prefix = append(append(p.prefix[:0], p.inbox+"."+rawToken()+"."...), strconv.Itoa(rawFastFlow)+".fail."...)
	p.flow, p.lastAck, p.started, p.final = rawFastFlow, 0, false, nil
	for seq := uint64(1); seq < uint64(n); seq++ {
		if seq == 1 {
			p.frame(seq, '0')
			if err := p.flush(); err != nil {
				return err
			}
			p.arm()
			for !p.started {
				if err := p.readReply(); err != nil {
					return err
				}
			}
			continue
		}
		if seq-1 >= p.lastAck+p.flow*rawFastMaxOut {
			if err := p.flush(); err != nil {
				return err
			}
			p.arm()
			for seq-1 >= p.lastAck+p.flow*rawFastMaxOut {
				if err := p.readReply(); err != nil {
					return err
				}
			}
		}
		p.frame(seq, '1')
		if len(p.out) >= rawMinWrite {
			if err := p.flush(); err != nil {
				return err
			}
		}
	}
	p.frame(uint64(n), '2')
	if err := p.flush(); err != nil {
		return err
	}
	p.arm()
	for p.final == nil {
		if err := p.readReply(); err != nil {
			return err
		}
	}
	if c, ok := jsonUint(p.final, "count"); !ok || c != uint64(n) {
		return fmt.Errorf("fast batch of %d acknowledged as %s", n, excerpt(p.final))
	}
	return nil
}

// --- atomicbatch ---

type rawAtomic struct {
	*rawJS
	subject string
	payload []byte
	batch   int
}

// NewAtomicBatch implements AtomicBatcher: HPUBs with the Nats-Batch-*
// headers; as natsio's defaults, the first message and the commit carry a
// reply and wait for it, the others are written together with the commit.
func (Raw) NewAtomicBatch(ctx context.Context, cfg Config) (Runner, error) {
	j, err := rawJSConnect(ctx, cfg, "bench-raw-atomicbatch")
	if err != nil {
		return nil, err
	}
	return &rawAtomic{rawJS: j, subject: cfg.Subject, payload: Payload(cfg.Size), batch: cfg.Batch}, nil
}

func (p *rawAtomic) Run(n int) error {
	var hdr []byte
	reply := p.inbox + ".a"
	frame := func(id string, seq int, commit bool) {
		hdr = append(hdr[:0], "NATS/1.0\r\nNats-Batch-Id: "...)
		hdr = append(hdr, id...)
		hdr = append(hdr, "\r\nNats-Batch-Sequence: "...)
		hdr = strconv.AppendInt(hdr, int64(seq), 10)
		r := ""
		if commit {
			hdr = append(hdr, "\r\nNats-Batch-Commit: 1"...)
			r = reply
		} else if seq == 1 {
			r = reply
		}
		hdr = append(hdr, "\r\n\r\n"...)
		p.out = AppendHPub(p.out, p.subject, r, hdr, p.payload)
	}
	for done := 0; done < n; {
		size := min(p.batch, n-done)
		id := "r" + rawToken()
		frame(id, 1, size == 1)
		if size > 1 {
			p.arm()
			if err := p.flush(); err != nil {
				return err
			}
			op, err := p.read()
			if err != nil {
				return err
			}
			if op.Kind != OpMsg || op.Size != 0 {
				return fmt.Errorf("atomic batch: first message answered %s", excerpt(op.Data))
			}
			for seq := 2; seq <= size; seq++ {
				frame(id, seq, seq == size)
			}
		}
		p.arm()
		if err := p.flush(); err != nil {
			return err
		}
		op, err := p.read()
		if err != nil {
			return err
		}
		if c, ok := jsonUint(op.Data, "count"); op.Kind != OpMsg || !ok || c != uint64(size) {
			return fmt.Errorf("atomic batch of %d: commit answered %s", size, excerpt(op.Data))
		}
		done += size
	}
	return nil
}
