package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/session"
)

// A JSON syntax error names the line and column of the offending character,
// so that a hand-edited scenario file can be fixed without counting bytes.
func TestParseSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"missing value", "{\n  \"name\": \"x\",\n  \"bytes\": ,\n}", "line 3, column 12: invalid character ','"},
		{"missing comma", "{\n  \"name\": \"x\"\n  \"bytes\": 5\n}", "line 3, column 3: invalid character '\"' after object key:value pair"},
		{"non-ASCII before", "{\"name\": \"ü×\", \"bytes\": 1e}", "line 1, column 27: invalid character '}' in exponent"},
		{"unclosed", "{\n  \"name\": \"x\",\n", "line 3, column 1: unexpected end of the file"},
		{"trailing", "{\"name\": \"x\"}\n\n  [1]", "line 3, column 3: trailing data"},
	}
	for _, tt := range tests {
		_, err := Parse(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Parse error = %v, want it to contain %q", tt.name, err, tt.want)
		}
	}
}

// Load puts the file name in front of the position.
func TestLoadSyntaxErrorNamesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(p, []byte("{\n\"name\": \"x\",,\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	if want := p + ": scenario: line 2, column 13: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Load error = %v, want prefix %q", err, want)
	}
}

// More paths than a session takes fail validation, naming the limit, instead
// of failing every run when the extra paths join.
func TestTooManyPaths(t *testing.T) {
	if MaxPaths != session.DefaultMaxPaths {
		t.Fatalf("MaxPaths = %d, session.DefaultMaxPaths = %d: keep them equal", MaxPaths, session.DefaultMaxPaths)
	}
	s, err := Get(Default)
	if err != nil {
		t.Fatal(err)
	}
	for len(s.Paths) < MaxPaths {
		s.Paths = append(s.Paths, s.Paths[0])
	}
	if err := s.Validate(); err != nil {
		t.Fatalf("%d paths: %v", MaxPaths, err)
	}
	s.Paths = append(s.Paths, s.Paths[0])
	err = s.Validate()
	var fe *FieldError
	want := fmt.Sprintf("paths: %d paths; a session takes at most %d", MaxPaths+1, MaxPaths)
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate = %v, want a *FieldError containing %q", err, want)
	}
}
