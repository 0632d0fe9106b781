// Command natsio is a command-line tool for NATS and JetStream built on the
// natsio client library: publish, subscribe, request and reply, trace the
// path of a message; manage streams, consumers, key-value buckets and object
// stores; inspect the account; run benchmarks; and start an embedded
// JetStream server to try it all with nothing installed.
//
//	natsio server &
//	natsio sub 'orders.>' &
//	natsio pub orders.new 'hello'
//
// Every command but server connects to --server (or NATS_URL), by default
// nats://127.0.0.1:4222. Run `natsio --help` for the command tree and
// `natsio COMMAND --help` for each command's flags and examples.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// app is one invocation of the CLI: its streams and global flags.
type app struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer

	// ctx ends on Ctrl-C (SIGINT) or SIGTERM.
	ctx  context.Context
	conn connFlags
	json bool
	// progress is "auto" (a bar when stderr is a terminal), "always" or
	// "never".
	progress string
	// out is stdout, escaping control characters when it is a terminal
	// (unless --no-escape).
	out        *escWriter
	stdoutTerm bool
	stderrTerm bool
	noEscape   bool
	// globals are the root's persistent flags (set once parsed);
	// resolvedOnce is set once resolveConn ran.
	globals      *pflag.FlagSet
	resolvedOnce bool
}

// run executes the command line args and returns the process exit code.
// It never lets a panic escape: a panic becomes a one-line error.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	out := &escWriter{w: stdout}
	a := &app{stdin: stdin, stdout: out, stderr: stderr, out: out,
		stdoutTerm: isTerminal(stdout), stderrTerm: isTerminal(stderr)}
	defer out.Flush()
	defer func() {
		if r := recover(); r != nil {
			code = a.report(panicError{r})
		}
	}()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	a.ctx = ctx

	root := a.rootCmd()
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		return a.report(err)
	}
	return 0
}

// rootCmd builds the command tree.
func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "natsio",
		Short: "A NATS and JetStream command-line tool built on the natsio client",
		Long: `natsio publishes, subscribes, requests, replies and traces messages on NATS;
manages JetStream streams, consumers, key-value buckets and object stores;
benchmarks; and runs an embedded JetStream server so you can try everything
with nothing installed.

Every command except 'server' connects to --server (or $NATS_URL), by default
nats://127.0.0.1:4222. Output is an aligned table or text; --json gives
machine-readable JSON. Errors go to stderr with a non-zero exit code.`,
		Example: `  natsio server                       # start a local JetStream server
  natsio sub 'orders.>'               # in a second terminal
  natsio pub orders.new 'hello'       # in a third
  natsio stream add ORDERS --subjects 'orders.>'
  natsio kv put config color blue`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate("natsio version {{.Version}}\n")
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{err: err, cmd: c}
	})
	a.addGlobalFlags(root)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		a.out.on = a.stdoutTerm && !a.noEscape
		return a.applyEnv(c)
	}

	root.AddGroup(
		&cobra.Group{ID: "core", Title: "Core NATS:"},
		&cobra.Group{ID: "js", Title: "JetStream:"},
		&cobra.Group{ID: "tools", Title: "Tools:"},
	)
	add := func(group string, cmds ...*cobra.Command) {
		for _, c := range cmds {
			c.GroupID = group
			root.AddCommand(c)
		}
	}
	add("core", a.pubCmd(), a.subCmd(), a.reqCmd(), a.replyCmd(), a.traceCmd(), a.microCmd(), a.rttCmd())
	add("js", a.streamCmd(), a.consumerCmd(), a.groupCmd(), a.kvCmd(), a.objectCmd(), a.accountCmd())
	add("tools", a.contextCmd(), a.serverCmd(), a.benchCmd())
	return root
}

// version is the module version natsio was built from, with the VCS
// revision when the build recorded one.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " (" + s.Value[:12] + ")"
		}
	}
	return v
}

// group returns a command that only holds subcommands: without one it
// prints its help, with an unknown one it fails with a usage error.
func group(use, short, long, example string, subs ...*cobra.Command) *cobra.Command {
	c := &cobra.Command{
		Use:     use,
		Short:   short,
		Long:    long,
		Example: example,
		Args:    cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{err: fmt.Errorf("unknown command %q for %q", args[0], c.CommandPath()), cmd: c}
			}
			return c.Help()
		},
	}
	c.AddCommand(subs...)
	return c
}
