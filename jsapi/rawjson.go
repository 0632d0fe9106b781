package jsapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"sync"
)

// extraFields holds the members of a JSON object that its Go type does not
// declare, verbatim, so that a configuration read from a newer server and
// written back (read-modify-write) loses nothing.
type extraFields map[string]json.RawMessage

// knownKeysCache maps a struct type to the lower-cased JSON keys of its
// fields (map[string]struct{}), computed once per type.
var knownKeysCache sync.Map

// knownKeys returns the lower-cased JSON member names the struct type t
// decodes: the names of its json tags (or field names), following embedded
// structs without a name as encoding/json does. Keys are lower-cased
// because encoding/json matches member names case-insensitively.
func knownKeys(t reflect.Type) map[string]struct{} {
	if v, ok := knownKeysCache.Load(t); ok {
		return v.(map[string]struct{})
	}
	keys := make(map[string]struct{})
	collectKeys(t, keys, 0)
	v, _ := knownKeysCache.LoadOrStore(t, keys)
	return v.(map[string]struct{})
}

func collectKeys(t reflect.Type, keys map[string]struct{}, depth int) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || depth > 8 {
		return
	}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			collectKeys(f.Type, keys, depth+1)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		keys[strings.ToLower(name)] = struct{}{}
	}
}

// unmarshalKeepUnknown decodes data into *v (whose type P must be a struct
// type without its own UnmarshalJSON, typically a method-less copy of the
// public type) and returns the members P does not declare, or nil.
func unmarshalKeepUnknown[P any](data []byte, v *P) (extraFields, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return nil, nil
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	known := knownKeys(reflect.TypeFor[P]())
	var extra extraFields
	for k, raw := range all {
		if _, ok := known[strings.ToLower(k)]; ok {
			continue
		}
		if extra == nil {
			extra = make(extraFields)
		}
		extra[k] = slices.Clone(raw)
	}
	return extra, nil
}

// marshalWithExtra encodes v (a method-less copy of the public type) and
// appends the members of extra, in key order. Members that v now declares
// are never in extra, so no key appears twice.
func marshalWithExtra(v any, extra extraFields) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	if len(b) < 2 || b[len(b)-1] != '}' {
		return b, nil // not an object: nothing to merge into
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := b[:len(b)-1]
	empty := len(bytes.TrimSpace(out)) == 1 // just "{"
	for _, k := range keys {
		raw := extra[k]
		if !json.Valid(raw) {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		kb, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(out, kb...)
		out = append(out, ':')
		out = append(out, raw...)
	}
	return append(out, '}'), nil
}
