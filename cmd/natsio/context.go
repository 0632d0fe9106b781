package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/natsio/natsio/natscontext"
)

func (a *app) contextCmd() *cobra.Command {
	c := group("context", "Manage connection contexts, shared with the nats CLI",
		`A context is a named set of connection settings: server URLs, credentials,
TLS files, inbox prefix, JetStream domain or API prefix. Contexts are the
nats CLI's files ($XDG_CONFIG_HOME/nats/context/NAME.json, by default under
~/.config), so both tools, and applications using the natscontext package,
share them. The selected context is used when no --context (or
$NATS_CONTEXT) is given; flags and environment variables override its
settings.`,
		`  natsio context add local --server nats://127.0.0.1:4222 --select
  natsio context add prod --server tls://nats.example.com --creds ~/prod.creds --description production
  natsio context ls
  natsio context select prod
  natsio --context local stream ls
  natsio context info prod
  natsio context rm local --force`,
		a.contextAddCmd(), a.contextLsCmd(), a.contextSelectCmd(), a.contextUnselectCmd(), a.contextInfoCmd(),
		a.contextEditCmd(), a.contextRmCmd())
	c.Aliases = []string{"ctx"}
	return c
}

// contextFlags are the global flags a context stores, with the field each
// sets.
var contextFlags = []struct {
	flag string
	set  func(c *natscontext.Context, f *connFlags)
}{
	{"server", func(c *natscontext.Context, f *connFlags) { c.URL = f.server }},
	{"user", func(c *natscontext.Context, f *connFlags) { c.User = f.user }},
	{"password", func(c *natscontext.Context, f *connFlags) { c.Password = f.password }},
	{"token", func(c *natscontext.Context, f *connFlags) { c.Token = f.token }},
	{"creds", func(c *natscontext.Context, f *connFlags) { c.Creds = absPath(f.creds) }},
	{"nkey", func(c *natscontext.Context, f *connFlags) { c.NKey = absPath(f.nkey) }},
	{"tlscert", func(c *natscontext.Context, f *connFlags) { c.Cert = absPath(f.tlsCert) }},
	{"tlskey", func(c *natscontext.Context, f *connFlags) { c.Key = absPath(f.tlsKey) }},
	{"tlsca", func(c *natscontext.Context, f *connFlags) { c.CA = absPath(f.tlsCA) }},
	{"tlsfirst", func(c *natscontext.Context, f *connFlags) { c.TLSFirst = f.tlsFirst }},
	{"inbox-prefix", func(c *natscontext.Context, f *connFlags) { c.InboxPrefix = f.inboxPrefix }},
	{"js-domain", func(c *natscontext.Context, f *connFlags) { c.JetStreamDomain = f.jsDomain }},
	{"js-api-prefix", func(c *natscontext.Context, f *connFlags) { c.JetStreamAPIPrefix = f.jsAPIPrefix }},
}

// absPath makes a relative file path absolute, so that a context works
// from any directory.
func absPath(p string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(p, "~") || strings.Contains(p, "://") {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

// applyContextFlags writes the connection flags given (on the command line
// or through the environment) into cx and reports whether there was one.
func (a *app) applyContextFlags(cx *natscontext.Context) bool {
	given := false
	for _, f := range contextFlags {
		if a.globals != nil && a.globals.Changed(f.flag) {
			f.set(cx, &a.conn)
			given = true
		}
	}
	return given
}

// warnEnv says which NATS_* variables went into a context.
func (a *app) warnEnv() {
	var set []string
	for _, e := range envFlags {
		if v := os.Getenv(e.env); v != "" && e.env != "NATS_CONTEXT" && e.env != "NATS_TIMEOUT" {
			set = append(set, "$"+e.env)
		}
	}
	if len(set) > 0 {
		fmt.Fprintf(a.stderr, "note: %s set in the environment went into the context\n", strings.Join(set, ", "))
	}
}

func (a *app) contextAddCmd() *cobra.Command {
	var (
		description string
		sel         bool
	)
	c := &cobra.Command{
		Use:     "add NAME",
		Aliases: []string{"create", "save"},
		Short:   "Save connection settings as a context",
		Long: `Save the connection flags given (--server, --user, --password, --token,
--creds, --nkey, --tlscert, --tlskey, --tlsca, --tlsfirst, --inbox-prefix,
--js-domain, --js-api-prefix, and their environment variables) as the
context NAME. When NAME exists, the flags given update it and its other
settings are kept. --select makes it the selected context.`,
		Example: `  natsio context add local --server nats://127.0.0.1:4222 --select
  natsio context add prod --server tls://a.example.com,tls://b.example.com --creds ~/prod.creds
  natsio context add hub --server nats://hub:4222 --js-domain hub --description 'hub cluster'`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if err := natscontext.ValidateName(name); err != nil {
				return contextErr(err, name)
			}
			cx, err := natscontext.Load(name)
			verb := "updated"
			if errors.Is(err, natscontext.ErrNotFound) {
				cx, err, verb = &natscontext.Context{Name: name}, nil, "saved"
			}
			if err != nil {
				return contextErr(err, name)
			}
			a.applyContextFlags(cx)
			if changed(c, "description") {
				cx.Description = description
			}
			cx.Name = name
			if err := cx.Validate(); err != nil {
				return usageError{err: fmt.Errorf("context %s: %s", name, trimPrefixes(err)), cmd: c}
			}
			if err := natscontext.Save(cx); err != nil {
				return err
			}
			a.warnEnv()
			if sel {
				if err := natscontext.Select(name); err != nil {
					return contextErr(err, name)
				}
			}
			if a.json {
				return a.printJSON(redacted(cx))
			}
			fmt.Fprintf(a.stdout, "Context %s %s", name, verb)
			if sel {
				fmt.Fprint(a.stdout, " and selected")
			}
			fmt.Fprintln(a.stdout)
			return nil
		},
	}
	c.Flags().StringVar(&description, "description", "", "description of the context")
	c.Flags().BoolVar(&sel, "select", false, "select the context")
	return c
}

// redacted is cx with its secrets replaced, for display.
func redacted(cx *natscontext.Context) *natscontext.Context {
	r := *cx
	for _, p := range []*string{&r.Password, &r.Token, &r.UserSeed} {
		if *p != "" {
			*p = "*****"
		}
	}
	r.URL = redactURL(r.URL)
	return &r
}

func (a *app) contextLsCmd() *cobra.Command {
	var names bool
	c := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list", "l"},
		Short:   "List contexts",
		Example: `  natsio context ls
  natsio context ls --names`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			list, err := natscontext.Names()
			if err != nil {
				return err
			}
			sel, _ := natscontext.Selected()
			if names {
				if a.json {
					return a.printJSON(nonNil(list))
				}
				for _, n := range list {
					fmt.Fprintln(a.stdout, n)
				}
				return nil
			}
			var infos []*natscontext.Context
			for _, n := range list {
				cx, err := natscontext.Load(n)
				if err != nil {
					cx = &natscontext.Context{Name: n, Description: "(unreadable: " + trimPrefixes(err) + ")"}
				}
				infos = append(infos, redacted(cx))
			}
			if a.json {
				return a.printJSON(nonNil(infos))
			}
			if len(infos) == 0 {
				fmt.Fprintln(a.stderr, "No contexts; create one with `natsio context add NAME --server URL`")
				return nil
			}
			rows := make([][]string, 0, len(infos))
			for _, cx := range infos {
				name := cx.Name
				if name == sel {
					name += " *"
				}
				rows = append(rows, []string{name, cx.ServerURL(), orDash(cx.Description)})
			}
			a.table([]string{"NAME", "URL", "DESCRIPTION"}, rows)
			if sel != "" {
				fmt.Fprintln(a.stderr, "* the selected context")
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&names, "names", "n", false, "list only the names")
	return c
}

func (a *app) contextSelectCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "select [NAME]",
		Aliases: []string{"switch", "set"},
		Short:   "Select the context used by default",
		Long:    `Make NAME the context every command uses without --context. Without NAME, print the selected one.`,
		Example: `  natsio context select prod
  natsio context select`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				sel, err := natscontext.Selected()
				if err != nil {
					return err
				}
				if sel == "" {
					return userError{msg: "no context is selected", hint: "select one with `natsio context select NAME`"}
				}
				fmt.Fprintln(a.stdout, sel)
				return nil
			}
			if err := natscontext.Select(args[0]); err != nil {
				return contextErr(err, args[0])
			}
			fmt.Fprintf(a.stdout, "Context %s selected\n", args[0])
			return nil
		},
	}
}

func (a *app) contextUnselectCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "unselect",
		Short:   "Select no context",
		Example: `  natsio context unselect`,
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if err := natscontext.Select(""); err != nil {
				return err
			}
			fmt.Fprintln(a.stdout, "No context selected")
			return nil
		},
	}
}

func (a *app) contextInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "info [NAME]",
		Aliases: []string{"show", "view"},
		Short:   "Show a context's settings (secrets hidden)",
		Example: `  natsio context info prod
  natsio context info --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			name := ""
			if len(args) == 1 {
				name = args[0]
			}
			cx, err := natscontext.Load(name)
			if err != nil {
				if name == "" && errors.Is(err, natscontext.ErrNotFound) {
					return userError{msg: "no context is selected", hint: "name one, or select one with `natsio context select NAME`", err: err}
				}
				return contextErr(err, name)
			}
			r := redacted(cx)
			if a.json {
				return a.printJSON(r)
			}
			dir, _ := natscontext.Dir()
			sel, _ := natscontext.Selected()
			s := &section{title: "Context " + r.Name + ":"}
			s.addIf("Description", r.Description)
			s.add("Selected", yesNo(sel == r.Name))
			s.add("Server URLs", r.ServerURL())
			for _, f := range []struct{ label, v string }{
				{"User", r.User}, {"Password", r.Password}, {"Token", r.Token}, {"Credentials", r.Creds}, {"NKey", r.NKey},
				{"User JWT", ellipsis(r.UserJWT, 24)}, {"User seed", r.UserSeed}, {"TLS certificate", r.Cert}, {"TLS key", r.Key},
				{"TLS CA", r.CA}, {"Inbox prefix", r.InboxPrefix}, {"JetStream domain", r.JetStreamDomain},
				{"JetStream API prefix", r.JetStreamAPIPrefix}, {"SOCKS proxy", r.SocksProxy}, {"nsc", r.NSC},
			} {
				s.addIf(f.label, f.v)
			}
			if r.TLSFirst {
				s.add("TLS first", "yes")
			}
			s.add("Path", filepath.Join(dir, r.Name+".json"))
			if err := cx.Validate(); err != nil {
				s.add("Problem", trimPrefixes(err))
			}
			a.sections(s)
			return nil
		},
	}
}

func ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func (a *app) contextEditCmd() *cobra.Command {
	var description string
	c := &cobra.Command{
		Use:     "edit NAME",
		Aliases: []string{"vi", "update"},
		Short:   "Change a context",
		Long: `Change the context NAME: with connection flags (as for 'context add') or
--description, only those settings change. Without, the file opens in
$EDITOR (vi when unset) and is saved if it is still a valid context.`,
		Example: `  natsio context edit prod --server tls://c.example.com
  natsio context edit prod`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			cx, err := natscontext.Load(name)
			if err != nil {
				return contextErr(err, name)
			}
			flags := a.applyContextFlags(cx)
			if changed(c, "description") {
				cx.Description, flags = description, true
			}
			if !flags {
				if cx, err = a.editInEditor(cx); err != nil {
					return err
				}
			}
			cx.Name = name
			if err := cx.Validate(); err != nil {
				return userError{msg: fmt.Sprintf("context %s not saved: %s", name, trimPrefixes(err)), err: err}
			}
			if err := natscontext.Save(cx); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "Context %s updated\n", name)
			return nil
		},
	}
	c.Flags().StringVar(&description, "description", "", "description of the context")
	return c
}

// editInEditor lets the user edit cx as JSON in $EDITOR and returns what
// was saved.
func (a *app) editInEditor(cx *natscontext.Context) (*natscontext.Context, error) {
	b, err := json.MarshalIndent(cx, "", "  ")
	if err != nil {
		return nil, err
	}
	nb, err := editBytes(b, "natsio-context-*.json")
	if err != nil {
		return nil, err
	}
	if bytes.Equal(nb, b) {
		return cx, nil
	}
	var out natscontext.Context
	dec := json.NewDecoder(bytes.NewReader(nb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&out); err != nil {
		return nil, userError{msg: "the edited context is not valid: " + err.Error(), hint: "nothing was saved; edit it again", err: err}
	}
	return &out, nil
}

func (a *app) contextRmCmd() *cobra.Command {
	var force bool
	c := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"remove", "delete", "del"},
		Short:   "Delete a context",
		Long: `Delete the context NAME. The selected context is deleted only with --force
(and is then unselected). On a terminal it asks for confirmation unless --force.`,
		Example: `  natsio context rm old --force`,
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name := args[0]
			if err := natscontext.ValidateName(name); err != nil {
				return contextErr(err, name)
			}
			if sel, _ := natscontext.Selected(); sel == name && !force {
				return userError{msg: fmt.Sprintf("context %s is the selected one", name),
					hint: "pass --force to delete it anyway, or select another first"}
			}
			if err := a.confirmed(force, "not deleted", "Delete context %s?", name); err != nil {
				return err
			}
			if err := natscontext.Delete(name); err != nil {
				return contextErr(err, name)
			}
			fmt.Fprintf(a.stdout, "Context %s deleted\n", name)
			return nil
		},
	}
	c.Flags().BoolVarP(&force, "force", "f", false, "do not ask for confirmation; delete the selected context too")
	return c
}
