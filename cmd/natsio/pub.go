package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/proto"
)

type pubFlags struct {
	count     int
	headers   []string
	reply     string
	sleep     time.Duration
	js        bool
	msgID     string
	quiet     bool
	templates bool
}

func (a *app) pubCmd() *cobra.Command {
	var f pubFlags
	c := &cobra.Command{
		Use:   "pub SUBJECT [BODY]",
		Short: "Publish a message",
		Long: `Publish BODY to SUBJECT, --count times. Without BODY the body is read from
stdin and sent as it is. A BODY argument and header values are templates
when they contain "{{" (unless --templates=false); each field is written
{{.Count}} as the nats CLI does, or {{Count}}:

  {{.Count}}       the message number, from 1 ({{.Cnt}} too)
  {{.ID}}          a random unique id
  {{.Time}}        the current time (RFC 3339 with nanoseconds)
  {{.TimeStamp}}   the current time (RFC 3339)
  {{.Unix}}        the current Unix time in seconds ({{.UnixNano}}: nanoseconds)
  {{Random 5 10}}  random printable text of 5 to 10 characters

An unknown field is an error, and a template cannot make a message larger
than the server's max_payload.

With -J (--jetstream, or --js) the message is published to JetStream and the stream's
acknowledgement (stream and sequence) is printed.`,
		Example: `  natsio pub orders.new 'hello'
  natsio pub orders.new 'order {{.Count}}' --count 10
  natsio pub orders.new --header Trace-Id:{{ID}} -H Source:cli 'hi'
  echo '{"id":1}' | natsio pub orders.new
  natsio pub --js orders.new 'stored' --msg-id order-1`,
		Args: rangeArgs(1, 2),
		RunE: func(c *cobra.Command, args []string) error { return a.runPub(c, args, &f) },
	}
	fl := c.Flags()
	fl.IntVarP(&f.count, "count", "c", 1, "number of messages to publish")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "header KEY:VALUE (repeatable)")
	fl.StringVar(&f.reply, "reply", "", "reply subject to send with the message")
	fl.DurationVar(&f.sleep, "sleep", 0, "pause between messages")
	fl.BoolVarP(&f.js, "jetstream", "J", false, "publish to JetStream and wait for the stream's acknowledgement")
	fl.BoolVar(&f.js, "js", false, "the same as --jetstream")
	fl.StringVar(&f.msgID, "msg-id", "", "JetStream message id (Nats-Msg-Id) for deduplication; a template (implies --js)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "print nothing on success")
	fl.BoolVar(&f.templates, "templates", true, "treat a BODY argument, header values and --msg-id holding {{ as templates (--templates=false sends them as they are)")
	return c
}

// pubResult is the --json output of pub.
type pubResult struct {
	Subject   string          `json:"subject"`
	Published int             `json:"published"`
	Bytes     int             `json:"bytes"`
	Acks      []*jsapi.PubAck `json:"acks,omitempty"`
	Duration  jsonDuration    `json:"duration"`
}

func (a *app) runPub(c *cobra.Command, args []string, f *pubFlags) error {
	ctx := c.Context()
	subject := args[0]
	if f.count < 1 {
		return usageError{err: fmt.Errorf("--count must be at least 1, got %d", f.count), cmd: c}
	}
	if err := proto.ValidatePublishSubject(subject); err != nil {
		return badSubject(subject, true, err)
	}
	var body string
	templates := f.templates
	if len(args) == 2 {
		body = args[1]
	} else {
		// A body from stdin is data: it is never executed as a template.
		templates = false
		if stdinIsTerminal() && a.stdin != nil {
			fmt.Fprintln(a.stderr, "reading the message body from stdin; end it with Ctrl-D")
		}
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return fmt.Errorf("reading the body from stdin: %w", err)
		}
		body = string(b)
	}
	bodyT, err := newTemplate("body", body, templates)
	if err != nil {
		return usageError{err: err, cmd: c}
	}
	type hdr struct {
		key string
		val *msgTemplate
	}
	var hdrs []hdr
	for _, h := range f.headers {
		k, v, ok := strings.Cut(h, ":")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return usageError{err: fmt.Errorf("--header %q is not KEY:VALUE", h), cmd: c}
		}
		t, err := newTemplate("header "+k, strings.TrimSpace(v), f.templates)
		if err != nil {
			return usageError{err: err, cmd: c}
		}
		hdrs = append(hdrs, hdr{k, t})
	}
	idT, err := newTemplate("msg-id", f.msgID, f.templates)
	if err != nil {
		return usageError{err: err, cmd: c}
	}
	useJS := f.js || f.msgID != ""

	nc, js, err := a.jetstream(ctx)
	if err != nil {
		return err
	}
	defer nc.Close()
	limit := int(min(nc.MaxPayload(), math.MaxInt32))
	bodyT.limit, idT.limit = limit, limit
	for _, x := range hdrs {
		x.val.limit = limit
	}

	res := pubResult{Subject: subject}
	start := time.Now()
	var h proto.Header
	for i := 1; i <= f.count; i++ {
		data, err := bodyT.render(i)
		if err != nil {
			return err
		}
		h.Reset()
		for _, x := range hdrs {
			v, err := x.val.render(i)
			if err != nil {
				return err
			}
			h.Add(x.key, string(v))
		}
		var hp *proto.Header
		if h.Len() > 0 {
			hp = &h
		}
		if useJS {
			var opts []jsapi.PubOpt
			if f.msgID != "" {
				id, err := idT.render(i)
				if err != nil {
					return err
				}
				opts = append(opts, jsapi.MsgID(string(id)))
			}
			ack, err := js.PublishMsg(ctx, subject, hp, data, opts...)
			if errors.Is(err, jsapi.ErrNoStreamResponse) {
				return userError{msg: fmt.Sprintf("no stream stored the message on %q", subject),
					hint: fmt.Sprintf("no stream captures that subject; create one with `natsio stream add NAME --subjects %s`", subject), err: err}
			}
			if err != nil {
				return err
			}
			res.Acks = append(res.Acks, &ack)
			if !a.json && !f.quiet {
				dup := ""
				if ack.Duplicate {
					dup = " (duplicate)"
				}
				fmt.Fprintf(a.stdout, "Stored message %d on %q in stream %s, sequence %d%s\n", i, subject, ack.Stream, ack.Sequence, dup)
			}
		} else if err := nc.PublishMsg(subject, f.reply, hp, data); err != nil {
			return err
		}
		res.Published++
		res.Bytes += len(data)
		if f.sleep > 0 && i < f.count {
			select {
			case <-time.After(f.sleep):
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	// Wait until the server has processed every message, so that errors
	// (permissions, a lost connection) are reported before we exit.
	if err := nc.Flush(ctx); err != nil {
		return err
	}
	res.Duration = jsonDuration(time.Since(start))
	switch {
	case a.json:
		return a.printJSON(res)
	case f.quiet || useJS:
		return nil
	case res.Published == 1:
		fmt.Fprintf(a.stdout, "Published %d bytes to %q\n", res.Bytes, subject)
	default:
		fmt.Fprintf(a.stdout, "Published %d messages (%s) to %q in %s\n", res.Published, humanBytes(res.Bytes), subject, humanDuration(time.Duration(res.Duration), "0s"))
	}
	return nil
}

// jsonDuration is a duration written in JSON as text ("1.5s").
type jsonDuration time.Duration

func (d jsonDuration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

func (d *jsonDuration) UnmarshalJSON(b []byte) error {
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	x, err := time.ParseDuration(s)
	*d = jsonDuration(x)
	return err
}

// msgTemplate renders a body or header value for message number n. Text
// without "{{" is used as is.
type msgTemplate struct {
	name  string
	plain []byte
	t     *template.Template
	buf   bytes.Buffer
	// limit caps a rendering, in bytes (the server's max_payload once
	// connected): a template cannot make more than one message can carry.
	limit int
	// request is the request a reply answers ({{Request}}, {{.Request}}).
	request string
}

// defaultTemplateLimit caps renderings before the server's max_payload is
// known: the server's default max_payload.
const defaultTemplateLimit = 1 << 20

// newTemplate parses text when it holds "{{" and templates is set;
// otherwise text is sent as it is.
func newTemplate(name, text string, templates bool) (*msgTemplate, error) {
	if !templates || !strings.Contains(text, "{{") {
		return &msgTemplate{name: name, plain: []byte(text)}, nil
	}
	m := &msgTemplate{name: name, limit: defaultTemplateLimit}
	t, err := template.New(name).Option("missingkey=error").Funcs(m.funcs(0)).Parse(text)
	if err != nil {
		return nil, fmt.Errorf("bad template in the %s: %v", name, err)
	}
	m.t = t
	return m, nil
}

// errTooLarge ends a rendering past its limit.
var errTooLarge = errors.New("larger than the server's max_payload")

// limitWriter fails once more than n bytes were written to it.
type limitWriter struct {
	b *bytes.Buffer
	n int
}

func (w *limitWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.n {
		return 0, errTooLarge
	}
	return w.b.Write(p)
}

func (m *msgTemplate) render(n int) ([]byte, error) {
	if m.t == nil {
		return m.plain, nil
	}
	m.buf.Reset()
	now := time.Now()
	data := templateData{Count: n, Cnt: n, ID: randomID(), Unix: now.Unix(), UnixNano: now.UnixNano(),
		Time: now.Format(time.RFC3339Nano), TimeStamp: now.Format(time.RFC3339), Request: m.request}
	if err := m.t.Funcs(m.funcs(n)).Execute(&limitWriter{&m.buf, m.limit}, data); err != nil {
		if errors.Is(err, errTooLarge) {
			return nil, userError{msg: fmt.Sprintf("the %s template makes more than %d bytes, the server's max_payload", m.name, m.limit), err: err}
		}
		return nil, userError{msg: "rendering the " + m.name + " template: " + err.Error(),
			hint: "see `natsio pub --help` for the template fields and functions", err: err}
	}
	return bytes.Clone(m.buf.Bytes()), nil
}

// templateData are the fields of body and header templates for one
// message: {{.Count}} as the nats CLI writes it, {{Count}} works too.
type templateData struct {
	Count, Cnt     int
	ID             string
	Unix, UnixNano int64
	Time           string
	TimeStamp      string
	Request        string
}

// funcs are the functions of body and header templates for message
// number n.
func (m *msgTemplate) funcs(n int) template.FuncMap {
	return template.FuncMap{
		"Count":     func() int { return n },
		"Cnt":       func() int { return n },
		"ID":        randomID,
		"Time":      func() string { return time.Now().Format(time.RFC3339Nano) },
		"TimeStamp": func() string { return time.Now().Format(time.RFC3339) },
		"Unix":      func() int64 { return time.Now().Unix() },
		"UnixNano":  func() int64 { return time.Now().UnixNano() },
		"Random": func(min, max int) (string, error) {
			if max > m.limit || min > m.limit {
				return "", fmt.Errorf("random text of %d to %d bytes: %w", min, max, errTooLarge)
			}
			return randomText(min, max), nil
		},
		"Request": func() string { return m.request },
	}
}

// randomID returns 22 random hex characters.
func randomID() string {
	var b [11]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// randomText returns random letters and digits, min to max long.
func randomText(min, max int) string {
	if min < 0 {
		min = 0
	}
	if max < min {
		max = min
	}
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	n := min + mrand.IntN(max-min+1)
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[mrand.IntN(len(alphabet))]
	}
	return string(b)
}
