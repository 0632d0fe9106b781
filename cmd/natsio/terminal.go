package main

import (
	"io"
	"os"
	"unicode/utf8"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal (a character device that
// answers terminal ioctls: /dev/null is a character device but not a
// terminal).
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// stderrIsTerminal reports whether stderr is a terminal (progress bars are
// drawn only there unless --progress says otherwise).
func stderrIsTerminal() bool { return isTerminal(os.Stderr) }

// stdinIsTerminal reports whether stdin is a terminal.
func stdinIsTerminal() bool { return isTerminal(os.Stdin) }

// escapeControls appends p to dst with every control character a terminal
// would act on made visible: C0 controls except newline and tab, DEL and
// bytes that are not UTF-8 as \xNN, C1 controls (U+0080 to U+009F) as
// \u00NN. Message data, header values and names from the server cannot
// then move the cursor, clear the screen, set the window title or write
// the clipboard (OSC 52). JSON output keeps its meaning: it never holds raw
// C0 controls, and \u0085 is the JSON escape of the same character.
func escapeControls(dst, p []byte) []byte {
	const hex = "0123456789abcdef"
	for len(p) > 0 {
		c := p[0]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
			} else {
				dst = append(dst, c)
			}
			p = p[1:]
			continue
		}
		r, n := utf8.DecodeRune(p)
		switch {
		case r == utf8.RuneError && n == 1:
			dst = append(dst, '\\', 'x', hex[c>>4], hex[c&0xf])
		case r >= 0x80 && r <= 0x9f:
			dst = append(dst, '\\', 'u', '0', '0', hex[r>>4], hex[r&0xf])
		default:
			dst = append(dst, p[:n]...)
		}
		p = p[n:]
	}
	return dst
}

// escWriter writes to w with escapeControls when on. A UTF-8 sequence cut
// by the end of one Write is held until the next (or Flush), so that large
// bodies written in pieces are escaped as one text.
type escWriter struct {
	w    io.Writer
	on   bool
	pend []byte
	buf  []byte
}

func (e *escWriter) Write(p []byte) (int, error) {
	if !e.on {
		return e.w.Write(p)
	}
	n := len(p)
	if len(e.pend) > 0 {
		p = append(e.pend, p...)
		e.pend = nil
	}
	// Hold back an incomplete but possibly valid sequence at the end.
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(p[i]) {
			if p[i] >= utf8.RuneSelf && !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	e.pend = append(e.pend[:0], p[cut:]...)
	e.buf = escapeControls(e.buf[:0], p[:cut])
	if _, err := e.w.Write(e.buf); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes what a Write held back.
func (e *escWriter) Flush() error {
	if len(e.pend) == 0 {
		return nil
	}
	p := e.pend
	e.pend = nil
	_, err := e.w.Write(escapeControls(nil, p))
	return err
}
