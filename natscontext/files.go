package natscontext

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// configRoot is $XDG_CONFIG_HOME/nats, or ~/.config/nats.
func configRoot() (string, error) {
	root := os.Getenv("XDG_CONFIG_HOME")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("natscontext: no configuration directory: %w", err)
		}
		root = filepath.Join(home, ".config")
	}
	return filepath.Join(root, "nats"), nil
}

// Dir returns the directory of the context files:
// $XDG_CONFIG_HOME/nats/context, or ~/.config/nats/context.
func Dir() (string, error) {
	root, err := configRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "context"), nil
}

// ValidateName reports a name that cannot be a context's: empty, or
// holding "..", "/", "\" or a control byte (below 0x20, and 0x7f)
// (ErrInvalidName).
func ValidateName(name string) error {
	if name == "" || strings.Contains(name, "..") || strings.ContainsAny(name, `/\`) ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return fmt.Errorf("%w: %q", ErrInvalidName, name)
	}
	return nil
}

func file(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	dir, err := Dir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name+".json"), nil
}

// Load reads the context name from the contexts directory (Dir); ""
// reads the selected one (ErrNotFound when none is selected). name must
// be a valid name (ValidateName, else ErrInvalidName): it is never read as
// a path, so a name from untrusted input cannot point at another file —
// LoadFile reads a context from a path. A missing context fails with
// ErrNotFound; a file that is not a context's JSON with a message naming
// it. A file that its group or others can read while it holds a password,
// token, JWT or seed is loaded with a warning (Context.Warnings).
func Load(name string) (*Context, error) {
	if name == "" {
		sel, err := Selected()
		if err != nil {
			return nil, err
		}
		if sel == "" {
			return nil, fmt.Errorf("%w: no context is selected", ErrNotFound)
		}
		name = sel
	}
	path, err := file(name)
	if err != nil {
		return nil, err
	}
	return read(path, name)
}

// LoadFile reads a context from the file at path, as the nats CLI does
// for a --context argument ending in ".json". Its Name is the file's name
// without ".json". Only give it a path the user chose: Load is the call
// for names. Errors and warnings are Load's.
func LoadFile(path string) (*Context, error) {
	return read(path, strings.TrimSuffix(filepath.Base(path), ".json"))
}

// read loads the context file at path under name.
func read(path, name string) (*Context, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %q (no file %s)", ErrNotFound, name, path)
	}
	if err != nil {
		return nil, fmt.Errorf("natscontext: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("natscontext: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("natscontext: %s is not a regular file", path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxContextFile+1))
	if err != nil {
		return nil, fmt.Errorf("natscontext: %w", err)
	}
	if len(b) > maxContextFile {
		return nil, fmt.Errorf("natscontext: %s is over %d bytes: not a context", path, maxContextFile)
	}
	var c Context
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("natscontext: %s is not a context: %v", path, err)
	}
	c.Name = name
	c.checkMode(path, fi.Mode())
	return &c, nil
}

// maxContextFile bounds a context file: the nats CLI's are under 2 KiB.
const maxContextFile = 1 << 20

// Names returns the names of the saved contexts, sorted. A missing
// directory means none.
func Names() ([]string, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("natscontext: %w", err)
	}
	var names []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || ValidateName(n) != nil {
			continue
		}
		if fi, err := e.Info(); err != nil || fi.Size() == 0 {
			continue
		}
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Selected returns the name of the selected context, or "" when none is.
func Selected() (string, error) {
	root, err := configRoot()
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(root, "context.txt"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("natscontext: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Select makes name the selected context; the one selected before is
// remembered in previous-context.txt as the nats CLI does. The context
// must exist (ErrNotFound). "" unselects.
func Select(name string) error {
	root, err := configRoot()
	if err != nil {
		return err
	}
	if name != "" {
		p, err := file(name)
		if err != nil {
			return err
		}
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("%w: %q", ErrNotFound, name)
		}
	}
	prev, err := Selected()
	if err != nil {
		return err
	}
	if prev != "" && prev != name {
		if err := writeFile(filepath.Join(root, "previous-context.txt"), []byte(prev)); err != nil {
			return err
		}
	}
	if name == "" {
		err := os.Remove(filepath.Join(root, "context.txt"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("natscontext: %w", err)
		}
		return nil
	}
	return writeFile(filepath.Join(root, "context.txt"), []byte(name))
}

// Save writes c to the file of c.Name, replacing it when it exists.
func Save(c *Context) error {
	p, err := file(c.Name)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("natscontext: %w", err)
	}
	return writeFile(p, b)
}

// Delete removes the context name. The selected context is unselected
// first. A missing context fails with ErrNotFound.
func Delete(name string) error {
	p, err := file(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	if sel, _ := Selected(); sel == name {
		if err := Select(""); err != nil {
			return err
		}
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("natscontext: %w", err)
	}
	return nil
}

// writeFile writes b to path through a temporary file in the same
// directory renamed into place; the directory is created 0700, the file
// is 0600.
func writeFile(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("natscontext: %w", err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("natscontext: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("natscontext: %w", err)
	}
	return nil
}
