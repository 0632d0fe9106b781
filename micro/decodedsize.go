package micro

import "reflect"

// mapEntryOverhead approximates what a Go map spends per entry besides
// the key and value themselves.
const mapEntryOverhead = 16

// decodedSize estimates the memory held by the value v points to: its
// own size plus what its strings, slices and maps reach. Discovery counts
// it against its byte bound, since a small JSON reply can decode to far
// more memory than its bytes.
func decodedSize(v any) int {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	return int(rv.Type().Size()) + reachable(rv)
}

// reachable is the memory v refers to beyond its own size.
func reachable(v reflect.Value) int {
	switch v.Kind() {
	case reflect.String:
		return v.Len()
	case reflect.Slice:
		n := v.Cap() * int(v.Type().Elem().Size())
		for i := range v.Len() {
			n += reachable(v.Index(i))
		}
		return n
	case reflect.Map:
		entry := int(v.Type().Key().Size()+v.Type().Elem().Size()) + mapEntryOverhead
		n := v.Len() * entry
		for it := v.MapRange(); it.Next(); {
			n += reachable(it.Key()) + reachable(it.Value())
		}
		return n
	case reflect.Struct:
		n := 0
		for i := range v.NumField() {
			n += reachable(v.Field(i))
		}
		return n
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		return int(e.Type().Size()) + reachable(e)
	}
	return 0
}
