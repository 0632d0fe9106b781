// Package natscontext reads and writes the connection contexts of the nats
// CLI (natscli), so that an application, the natsio CLI and the nats CLI
// connect with one shared configuration.
//
// A context is a JSON file named NAME.json in the directory returned by
// [Dir]: $XDG_CONFIG_HOME/nats/context, or ~/.config/nats/context when
// XDG_CONFIG_HOME is not set. The name of the selected context is kept in
// context.txt in the directory above it ($XDG_CONFIG_HOME/nats). The files
// are the nats CLI's: a context written by one tool is read by the other.
//
// Connecting from a named context ("" for the selected one), with options
// of your own after the context's, and a JetStream view with the
// context's domain or API prefix:
//
//	c, err := natscontext.Load("prod")
//	if err != nil {
//		return err
//	}
//	nc, err := natscontext.Connect(ctx, c.Name, conn.Name("billing"))
//	if err != nil {
//		return err
//	}
//	js, err := jsapi.New(nc, c.JSOptions()...)
//	use(js, err)
//
// [Context.Options] and [Context.ServerURL] give the same settings to a
// conn.Connect of your own. The nats CLI and natsio take the context name
// from $NATS_CONTEXT; an application that wants the same passes
// os.Getenv("NATS_CONTEXT") as the name ("" when unset: the selected one).
//
// A context supplies every connection setting natsio has: server URLs,
// user and password, token, credentials file, nkey seed file, user JWT and
// seed, TLS client certificate, key and CA, TLS handshake first, the inbox
// prefix, and the JetStream domain or API prefix. Settings natsio cannot
// honour (a SOCKS proxy, the Windows certificate store, nsc lookups and
// secret references other than a file path) make [Context.Options] fail
// with [ErrUnsupported] rather than connect differently than asked.
//
// Files are written as the nats CLI writes them: the directory with mode
// 0700, each file 0600, through a temporary file renamed into place.
//
// # Untrusted names and secrets
//
// [Load] and [Connect] take a name, never a path: a name that
// [ValidateName] refuses (empty, "..", "/", "\", control bytes) is
// [ErrInvalidName], so a name from untrusted input cannot make them read
// another file and connect where it says with the credentials it names.
// [LoadFile] reads a path the user chose. A context file that its group or
// others can read while it holds a secret is loaded with a warning
// ([Context.Warnings]; Connect logs it). Printing a Context with any fmt
// verb shows [REDACTED] in place of its secrets.
package natscontext
