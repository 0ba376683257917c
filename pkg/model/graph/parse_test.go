package graph

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// A corrupt model gets an error that says what is wrong, never a Graph.
func TestParseCorrupt(t *testing.T) {
	good, err := os.ReadFile("../testdata/gym-policy.onnx")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "0 graphs"},
		{"garbage", []byte("this is not a protobuf at all, just text"), ""},
		{"truncated", good[:len(good)/2], ""},
		{"one byte short", good[:len(good)-1], ""},
		{"field number 0", []byte{0x00, 0x01}, ""},
		{"two graphs", append(append([]byte{}, good...), 0x3a, 0x00), "2 graphs"},
	}
	for _, c := range cases {
		g, err := Parse(c.b)
		if err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s: err = %v, want a parse error", c.name, err)
			continue
		}
		if g != nil {
			t.Errorf("%s: a Graph beside the error %v", c.name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %q, want it to say %q", c.name, err, c.want)
		}
	}
}

// BenchmarkParse reads the gym policy's ONNX file from memory.
func BenchmarkParse(b *testing.B) {
	good, err := os.ReadFile("../testdata/gym-policy.onnx")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(good); err != nil {
			b.Fatal(err)
		}
	}
}
