package ordered_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/natsio/natsio/jsapi"
	"github.com/natsio/natsio/ordered"
	"github.com/natsio/natsio/pull"
)

// borrowedPayload is message i's body: a few hundred bytes, so that a
// batch takes several socket reads and some messages are cut by a read.
func borrowedPayload(i int) []byte { return bytes.Repeat(fmt.Appendf(nil, "[%d]", i), 50) }

// borrowedCopy is what a loop body keeps of a borrowed message: copies.
type borrowedCopy struct {
	subject, reply, msgID, stream, consumer string
	data                                    []byte
	seq                                     uint64
}

// TestBorrowedLifetime: each borrowed message's fields (subject, reply,
// header, data, metadata) are valid within the loop body or handler it
// was given to, and the copies kept from them stay intact once the
// messages are gone, whichever way the loop runs.
func TestBorrowedLifetime(t *testing.T) {
	const n = 2000
	e := newEnv(t, jsapi.StorageMemory)
	subject := func(i int) string { return fmt.Sprintf("o.lent.%d", i%7) }
	msgID := func(i int) string { return fmt.Sprintf("id-%d", i) }
	for i := range n {
		if _, err := e.js.Publish(e.ctx, subject(i), borrowedPayload(i), jsapi.MsgID(msgID(i))); err != nil {
			t.Fatal(err)
		}
	}
	for _, form := range []string{"Messages", "Consume"} {
		t.Run(form, func(t *testing.T) {
			oc := newOrdered(t, e.js, "O", ordered.Config{})
			name := oc.Name()
			lentBefore := e.nc.Stats().BorrowedMsgs
			kept := make([]borrowedCopy, 0, n)
			// body checks the message while it is valid and keeps copies;
			// it reports whether to go on.
			body := func(m *jsapi.Msg) bool {
				i := len(kept)
				md, err := m.Metadata()
				id, ok := m.Header.Lookup("Nats-Msg-Id")
				if err != nil || md.StreamSeq != uint64(i+1) || md.Stream != "O" || md.Consumer != name ||
					m.Subject != subject(i) || !bytes.Equal(m.Data, borrowedPayload(i)) || !ok || string(id) != msgID(i) {
					t.Errorf("message %d in its body: %s seq %d (%v) id %q, %.30q", i, m.Subject, md.StreamSeq, err, id, m.Data)
					return false
				}
				kept = append(kept, borrowedCopy{
					subject: strings.Clone(m.Subject), reply: strings.Clone(m.Reply), msgID: strings.Clone(string(id)),
					stream: strings.Clone(md.Stream), consumer: strings.Clone(md.Consumer),
					data: bytes.Clone(m.Data), seq: md.StreamSeq,
				})
				return len(kept) < n
			}
			opts := []ordered.Opt{ordered.MaxMessages(100), ordered.Borrowed()}
			switch form {
			case "Messages":
				for m, err := range oc.Messages(e.ctx, opts...) {
					if err != nil {
						t.Fatal(err)
					}
					if !body(m) {
						break
					}
				}
			case "Consume":
				var cc *pull.ConsumeContext
				started := make(chan struct{})
				cc, err := oc.Consume(e.ctx, func(m *jsapi.Msg) {
					<-started
					if !body(m) {
						cc.Stop()
					}
				}, opts...)
				if err != nil {
					t.Fatal(err)
				}
				close(started)
				select {
				case <-cc.Closed():
				case <-e.ctx.Done():
					t.Fatal("Consume never ended")
				}
				if err := cc.Err(); err != nil {
					t.Fatal(err)
				}
			}
			if len(kept) != n {
				t.Fatalf("%d of %d messages", len(kept), n)
			}
			if e.nc.Stats().BorrowedMsgs == lentBefore {
				t.Fatalf("nothing lent over %d messages", n)
			}
			// The borrowed memory has long been reused: the copies hold.
			for i, k := range kept {
				md, err := jsapi.ParseAckSubject(k.reply)
				if k.subject != subject(i) || !bytes.Equal(k.data, borrowedPayload(i)) || k.msgID != msgID(i) ||
					k.stream != "O" || k.consumer != name || k.seq != uint64(i+1) || err != nil || md.StreamSeq != k.seq {
					t.Fatalf("copy %d after the loop: %+v (reply %v)", i, k, err)
				}
			}
		})
	}
}
