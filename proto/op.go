package proto

// Kind names a protocol operation.
type Kind uint8

// Operations. The first group is sent by servers, the second by clients;
// PING and PONG go both ways.
const (
	KindNone Kind = iota
	KindInfo
	KindMsg
	KindHMsg
	KindPing
	KindPong
	KindOK
	KindErr

	KindConnect
	KindPub
	KindHPub
	KindSub
	KindUnsub
)

var kindNames = [...]string{
	KindNone: "NONE", KindInfo: "INFO", KindMsg: "MSG", KindHMsg: "HMSG",
	KindPing: "PING", KindPong: "PONG", KindOK: "+OK", KindErr: "-ERR",
	KindConnect: "CONNECT", KindPub: "PUB", KindHPub: "HPUB", KindSub: "SUB",
	KindUnsub: "UNSUB",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// Op is one parsed operation. Which fields are set depends on Kind:
//
//	INFO, CONNECT   Text (the JSON object)
//	-ERR            Text (the message, surrounding single quotes removed)
//	MSG             Subject, SID, Reply (may be empty), Payload
//	HMSG            Subject, SID, Reply, Header (the raw block), Payload
//	PUB, HPUB       Subject, Reply, [Header,] Payload
//	SUB             Subject, Queue (may be empty), SID
//	UNSUB           SID, Max (0 when absent)
//
// An Op and its slices are valid until the next call to Parser.Next or
// Parser.Feed, unless Owned is set: then Body (and Header and Payload, its
// two parts) were allocated by Parser.Alloc for this op alone and belong to
// the caller, who may keep them. Body is the header block followed by the
// payload, as one slice.
type Op struct {
	Kind    Kind
	Owned   bool
	SID     uint64
	Max     uint64
	Subject []byte
	Reply   []byte
	Queue   []byte
	Body    []byte
	Header  []byte
	Payload []byte
	Text    []byte
}

// Size reports the number of message bytes the op carries (header block plus
// payload).
func (o *Op) Size() int { return len(o.Header) + len(o.Payload) }

// Default limits; see Limits.
const (
	DefaultMaxControlLine = 4096
	DefaultMaxInfoLine    = 1 << 20
	DefaultMaxPayload     = 64 << 20
)

// Limits bound what a Parser accepts. Zero fields take the defaults.
type Limits struct {
	// MaxControlLine caps the argument bytes of one control line (what
	// follows the op name and its separator, up to but not including the
	// '\n'), other than INFO and CONNECT. Default 4096, the server's own
	// limit; raise it if the server's max_control_line is raised.
	MaxControlLine int
	// MaxInfoLine caps an INFO or CONNECT line, which carries JSON that
	// grows with cluster gossip. Default 1 MiB.
	MaxInfoLine int
	// MaxPayload caps header plus payload of one message. A connection sets
	// it to the server's max_payload plus slack for headers the server adds.
	// Default 64 MiB, the largest max_payload a server accepts.
	MaxPayload int
}

func (l Limits) controlLine() int {
	if l.MaxControlLine > 0 {
		return l.MaxControlLine
	}
	return DefaultMaxControlLine
}

func (l Limits) infoLine() int {
	if l.MaxInfoLine > 0 {
		return l.MaxInfoLine
	}
	return DefaultMaxInfoLine
}

func (l Limits) payload() int {
	if l.MaxPayload > 0 {
		return l.MaxPayload
	}
	return DefaultMaxPayload
}
