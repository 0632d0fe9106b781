package main

// A pseudo-terminal to run the CLI on (Linux: /dev/ptmx and its ioctls).

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair: the controlling side (what a
// terminal emulator reads and types into) and the terminal the CLI is
// given.
func openPTY(t *testing.T) (ptm, pts *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	ptm = os.NewFile(uintptr(fd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		ptm.Close()
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		ptm.Close()
		t.Fatalf("pty number: %v", err)
	}
	pts, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		t.Fatalf("opening the pty: %v", err)
	}
	// No echo of what the test types, and no \n → \r\n on output, so that
	// the output reads as the CLI wrote it.
	tio, err := unix.IoctlGetTermios(int(pts.Fd()), unix.TCGETS)
	if err == nil {
		tio.Lflag &^= unix.ECHO
		tio.Oflag &^= unix.ONLCR
		unix.IoctlSetTermios(int(pts.Fd()), unix.TCSETS, tio)
	}
	return ptm, pts
}

// ttyProc is the CLI running with a pseudo-terminal as stdin, stdout and
// stderr (each chosen by the caller: a nil one gets the terminal).
type ttyProc struct {
	*proc
	ptm *os.File
	out *syncBuf // everything written to the terminal
}

// startTTY starts natsio on a pseudo-terminal. Streams not given are the
// terminal; stdout and stderr given as nil are the terminal too, others
// are captured in p.stdout and p.stderr as by startProc.
func startTTY(t *testing.T, ttyStdout, ttyStderr bool, args ...string) *ttyProc {
	t.Helper()
	ptm, pts := openPTY(t)
	p := &proc{args: args, stdout: newSyncBuf(), stderr: newSyncBuf(), done: make(chan struct{})}
	p.cmd = exec.Command(binPath, args...)
	p.cmd.Stdin = pts
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if ttyStdout {
		p.cmd.Stdout = pts
	}
	if ttyStderr {
		p.cmd.Stderr = pts
	}
	p.cmd.Env = append(os.Environ(), "NATS_URL=", "NATS_CONTEXT=", "XDG_CONFIG_HOME="+testConfigHome, "TERM=xterm")
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting natsio %v: %v", args, err)
	}
	pts.Close()
	tp := &ttyProc{proc: p, ptm: ptm, out: newSyncBuf()}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := ptm.Read(buf)
			if n > 0 {
				tp.out.Write(buf[:n])
			}
			if err != nil { // EIO once the CLI closed the terminal
				return
			}
		}
	}()
	go func() {
		err := p.cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok {
			p.code = ee.ExitCode()
		} else if err != nil {
			p.code = -1
		}
		<-readDone
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		ptm.Close()
	})
	return tp
}

// waitTTY waits for substr on the terminal.
func (p *ttyProc) waitTTY(t *testing.T, substr string) {
	t.Helper()
	if !p.out.waitFor(substr, 20*time.Second) {
		t.Fatalf("natsio %v: %q not shown on the terminal within 20s\nterminal:\n%q", p.args, substr, p.out)
	}
}

// finish waits for the CLI to exit and returns its result with the
// terminal's text as stdout when stdout was the terminal.
func (p *ttyProc) finish(t *testing.T) (result, string) {
	t.Helper()
	r := p.wait(t, 60*time.Second)
	return r, p.out.String()
}
