package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
)

// Load reads one scenario from a JSON file (see Parse) and resolves relative
// trace paths against the file's directory.
func Load(path string) (Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return Scenario{}, err
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		return Scenario{}, fmt.Errorf("%s: %w", path, err)
	}
	dir := filepath.Dir(path)
	var links []*Link
	for i := range s.Paths {
		links = append(links, &s.Paths[i].Up, &s.Paths[i].Down)
	}
	for i := range s.Bottlenecks {
		links = append(links, &s.Bottlenecks[i].Up, &s.Bottlenecks[i].Down)
	}
	for _, l := range links {
		if l.Trace != "" && !filepath.IsAbs(l.Trace) && !strings.HasPrefix(l.Trace, BuiltinTrace) {
			l.Trace = filepath.Join(dir, l.Trace)
		}
	}
	return s, nil
}

// Parse reads one scenario from JSON, strictly: unknown fields, values of the
// wrong type, durations that are not duration strings, trailing data and
// invalid values (see Scenario.Validate) are errors, each naming the field by
// its JSON path (a *FieldError where the path is known).
func Parse(r io.Reader) (Scenario, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Scenario{}, err
	}
	// First pass: a generic walk that names the path of unknown fields and of
	// values of the wrong type, which encoding/json reports without a path.
	var raw any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Scenario{}, jsonError(data, err)
	}
	if dec.More() {
		line, col := position(data, skipSpace(data, int(dec.InputOffset())))
		return Scenario{}, fmt.Errorf("scenario: line %d, column %d: trailing data after the JSON object", line, col)
	}
	if err := walk(raw, reflect.TypeFor[Scenario](), ""); err != nil {
		if fe, ok := err.(*FieldError); ok {
			if m, ok := raw.(map[string]any); ok {
				fe.Scenario, _ = m["name"].(string)
			}
		}
		return Scenario{}, err
	}
	// Second pass: the strict typed decode.
	var s Scenario
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Scenario{}, jsonError(data, err)
	}
	if err := s.Validate(); err != nil {
		return Scenario{}, err
	}
	return s, nil
}

// jsonError places a decoding error of data at its line and column (both
// from 1; columns count characters), where encoding/json knows the offset.
func jsonError(data []byte, err error) error {
	off := -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1 // Offset counts the bytes read, the bad one included
	case errors.As(err, &te):
		off = int(te.Offset) - 1
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		off = len(data)
		err = fmt.Errorf("unexpected end of the file (an object or string is not closed)")
	}
	if off < 0 {
		return fmt.Errorf("scenario: %w", err)
	}
	line, col := position(data, off)
	return fmt.Errorf("scenario: line %d, column %d: %w", line, col, err)
}

// position is the line and column, from 1, of byte offset off in data;
// columns count characters (UTF-8), a tab as one.
func position(data []byte, off int) (line, col int) {
	off = min(max(off, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	start := bytes.LastIndexByte(before, '\n') + 1
	return line, 1 + utf8.RuneCount(before[start:])
}

// skipSpace returns the offset of the first non-space byte of data at or
// after off.
func skipSpace(data []byte, off int) int {
	for off < len(data) && (data[off] == ' ' || data[off] == '\t' || data[off] == '\n' || data[off] == '\r') {
		off++
	}
	return off
}

var durationType = reflect.TypeFor[Duration]()

// walk checks a generically decoded JSON value v against the Go type t,
// naming the first mismatch by its JSON path.
func walk(v any, t reflect.Type, path string) error {
	bad := func(format string, a ...any) error {
		p := path
		if p == "" {
			p = "(top level)"
		}
		return &FieldError{Path: p, Msg: fmt.Sprintf(format, a...)}
	}
	if v == nil {
		return nil // null: the zero value
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == durationType {
		s, ok := v.(string)
		if !ok {
			return bad("%v is not a duration string such as \"10ms\" (durations carry their unit)", v)
		}
		if _, err := time.ParseDuration(s); err != nil {
			return bad("%q is not a duration such as \"10ms\"", s)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			return bad("want an object, got %s", jsonKind(v))
		}
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			fields[name] = f.Type
		}
		for k, fv := range m {
			ft, ok := fields[k]
			p := k
			if path != "" {
				p = path + "." + k
			}
			if !ok {
				return &FieldError{Path: p, Msg: "unknown field"}
			}
			if err := walk(fv, ft, p); err != nil {
				return err
			}
		}
	case reflect.Slice:
		a, ok := v.([]any)
		if !ok {
			return bad("want an array, got %s", jsonKind(v))
		}
		for i, e := range a {
			if err := walk(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("want a string, got %s", jsonKind(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad("want true or false, got %s", jsonKind(v))
		}
	case reflect.Float64, reflect.Float32:
		n, ok := v.(json.Number)
		if !ok {
			return bad("want a number, got %s", jsonKind(v))
		}
		if _, err := n.Float64(); err != nil {
			return bad("%s is not a number", n)
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, ok := v.(json.Number)
		if !ok {
			return bad("want an integer, got %s", jsonKind(v))
		}
		if _, err := n.Int64(); err != nil {
			return bad("%s is not an integer", n)
		}
	}
	return nil
}

func jsonKind(v any) string {
	switch v := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return fmt.Sprintf("the string %q", v)
	case bool:
		return fmt.Sprintf("%v", v)
	case json.Number:
		return "the number " + v.String()
	}
	return fmt.Sprintf("%T", v)
}

// Marshal writes s as indented JSON, the form Load reads.
func Marshal(s Scenario) ([]byte, error) {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
