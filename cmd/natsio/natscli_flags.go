package main

// The rest of natscli v0.5.1's flags of stream add/edit and consumer
// add/edit: what each maps to in the configuration, and the add/edit
// helpers they share (--config, --validate, --output, --dry-run,
// --interactive, --force, and fisk's --no-FLAG negations).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// negValue is a hidden --no-NAME flag that sets the bool flag NAME to
// false, as natscli's flag parser (fisk) offers for every negatable bool.
type negValue struct {
	fs   *pflag.FlagSet
	name string
}

func (n negValue) String() string   { return "false" }
func (n negValue) Type() string     { return "bool" }
func (n negValue) IsBoolFlag() bool { return true }
func (n negValue) Set(v string) error {
	if v != "true" {
		return fmt.Errorf("--no-%s takes no value", n.name)
	}
	return n.fs.Set(n.name, "false")
}

// addNegations gives every bool flag of c without one a hidden --no-NAME.
func addNegations(c *cobra.Command) {
	fs := c.Flags()
	var names []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Value.Type() == "bool" && !strings.HasPrefix(f.Name, "no-") && fs.Lookup("no-"+f.Name) == nil {
			names = append(names, f.Name)
		}
	})
	for _, n := range names {
		f := fs.VarPF(negValue{fs, n}, "no-"+n, "", "set --"+n+" to false")
		f.NoOptDefVal = "true"
		f.Hidden = true
	}
}

// addExtras are the flags natscli's add commands share beyond the
// configuration.
type addExtras struct {
	validate bool
	output   string
}

func (e *addExtras) register(c *cobra.Command) {
	c.Flags().BoolVar(&e.validate, "validate", false, "only check the configuration: nothing is created")
	c.Flags().StringVar(&e.output, "output", "", "write the configuration to this JSON file instead of creating")
}

// done handles --validate and --output for cfg; it reports whether the
// command is finished.
func (a *app) addDone(e *addExtras, what string, cfg any) (bool, error) {
	switch {
	case e.output != "":
		b, err := json.MarshalIndent(cfg, "", "  ")
		if err != nil {
			return true, err
		}
		if err := os.WriteFile(e.output, append(b, '\n'), 0o600); err != nil {
			return true, userError{msg: "writing --output: " + err.Error(), err: err}
		}
		if !a.json {
			fmt.Fprintf(a.stdout, "%s configuration written to %s\n", what, e.output)
		}
		return true, nil
	case e.validate:
		if a.json {
			return true, a.printJSON(map[string]any{"valid": true, "config": cfg})
		}
		fmt.Fprintf(a.stdout, "%s configuration is valid\n", what)
		return true, nil
	}
	return false, nil
}

// editExtras are the flags natscli's edit commands share beyond the
// configuration.
type editExtras struct {
	config           string
	force            bool
	interactive, dry bool
}

func (e *editExtras) register(c *cobra.Command, what string) {
	fl := c.Flags()
	fl.StringVar(&e.config, "config", "", "JSON file with the new "+what+" configuration; flags given override it")
	fl.BoolVarP(&e.force, "force", "f", false, "accepted for nats CLI scripts: edit never asks for confirmation")
	fl.BoolVarP(&e.interactive, "interactive", "i", false, "edit the configuration as JSON in $EDITOR")
	fl.BoolVar(&e.dry, "dry-run", false, "only show the differences; change nothing")
}

// any reports whether the flags ask for a change by themselves.
func (e *editExtras) any() bool { return e.config != "" || e.interactive }

// base returns the configuration the edit starts from: cur, replaced by
// --config's file and then by what the editor saved (--interactive).
func editBase[T any](a *app, e *editExtras, what string, cur T) (T, error) {
	out := cur
	if e.config != "" {
		b, err := os.ReadFile(e.config)
		if err != nil {
			return out, userError{msg: "reading --config: " + err.Error(), err: err}
		}
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return out, userError{msg: fmt.Sprintf("--config %s is not a %s configuration: %v", e.config, what, err), err: err}
		}
		out = v
	}
	if e.interactive {
		b, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return out, err
		}
		nb, err := editBytes(b, "natsio-"+what+"-*.json")
		if err != nil {
			return out, err
		}
		var v T
		if err := json.Unmarshal(nb, &v); err != nil {
			return out, userError{msg: "the edited " + what + " configuration is not valid: " + err.Error(), hint: "nothing was changed; edit it again", err: err}
		}
		out = v
	}
	return out, nil
}

// editBytes lets the user edit b in $EDITOR (vi when unset) and returns
// what was saved.
func editBytes(b []byte, pattern string) ([]byte, error) {
	editor := os.Getenv("EDITOR")
	if editor == "" {
		editor = "vi"
	}
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	f.Close()
	parts := strings.Fields(editor)
	cmd := exec.Command(parts[0], append(parts[1:], f.Name())...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, userError{msg: fmt.Sprintf("editor %q failed: %v", editor, err), hint: "set $EDITOR, or change settings with flags", err: err}
	}
	return os.ReadFile(f.Name())
}

// printDiff prints how next differs from cur, member by member of their
// JSON, for --dry-run.
func (a *app) printDiff(what string, cur, next any) error {
	flat := func(v any) (map[string]string, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, err
		}
		out := map[string]string{}
		for k, v := range m {
			var buf bytes.Buffer
			if json.Compact(&buf, v) == nil {
				out[k] = buf.String()
			}
		}
		return out, nil
	}
	cm, err := flat(cur)
	if err != nil {
		return err
	}
	nm, err := flat(next)
	if err != nil {
		return err
	}
	var keys []string
	for k := range cm {
		keys = append(keys, k)
	}
	for k := range nm {
		if _, ok := cm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	type change struct {
		Field string `json:"field"`
		Old   any    `json:"old,omitempty"`
		New   any    `json:"new,omitempty"`
	}
	var changes []change
	for _, k := range keys {
		if cm[k] != nm[k] {
			changes = append(changes, change{k, json.RawMessage(orNull(cm[k])), json.RawMessage(orNull(nm[k]))})
		}
	}
	if a.json {
		return a.printJSON(changes)
	}
	if len(changes) == 0 {
		fmt.Fprintf(a.stdout, "No differences: the %s configuration stays as it is\n", what)
		return nil
	}
	fmt.Fprintf(a.stdout, "Differences (dry run, nothing changed):\n\n")
	for _, ch := range changes {
		if s := cm[ch.Field]; s != "" {
			fmt.Fprintf(a.stdout, "- %s: %s\n", ch.Field, s)
		}
		if s := nm[ch.Field]; s != "" {
			fmt.Fprintf(a.stdout, "+ %s: %s\n", ch.Field, s)
		}
	}
	return nil
}

func orNull(s string) string {
	if s == "" {
		return "null"
	}
	return s
}
