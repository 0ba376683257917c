package edar

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"testing"
)

func randState(rng *rand.Rand, n int) State {
	s := State{N: n}
	for i := range s.Conn {
		s.Conn[i] = rng.Float32()
	}
	for i := 0; i < n; i++ {
		for j := range s.Sub[i] {
			for k := range s.Sub[i][j] {
				s.Sub[i][j][k] = rng.Float32() * 3
			}
		}
	}
	return s
}

func sampleFile(t testing.TB, slots, n int) []byte {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	w, err := NewWriter(&buf, slots)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		tr := Transition{S: randState(rng, 1+i%slots), A: Mode(i % 2), R: float32(i) - 1.5, S2: randState(rng, 1+(i+1)%slots), Done: i == n-1}
		if err := w.Write(&tr); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFormatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, 2)
	var in []Transition
	for i := 0; i < 5; i++ {
		tr := Transition{S: randState(rng, 1+i%2), A: Mode(i % 2), R: float32(i) * 0.25, S2: randState(rng, 2), Done: i == 4}
		in = append(in, tr)
		if err := w.Write(&tr); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	if got, want := buf.Len(), HeaderSize+5*RecordSize(2); got != want {
		t.Fatalf("file is %d bytes, want %d", got, want)
	}
	out, err := ReadAll(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != len(in) {
		t.Fatalf("read %d transitions, want %d", len(out), len(in))
	}
	for i := range in {
		if out[i] != in[i] {
			t.Fatalf("transition %d differs:\n got %+v\nwant %+v", i, out[i], in[i])
		}
	}
	if err := w.Write(&Transition{S: State{N: 3}, S2: State{N: 1}}); err == nil {
		t.Fatal("3 subflows in a 2-slot file: want an error")
	}
}

func TestFormatRejectsCorruption(t *testing.T) {
	good := sampleFile(t, 2, 3)
	mutate := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"empty":       nil,
		"short":       good[:10],
		"magic":       mutate(func(b []byte) []byte { b[0] = 'X'; return b }),
		"version":     mutate(func(b []byte) []byte { b[6] = 9; return b }),
		"slots":       mutate(func(b []byte) []byte { b[8] = 0; return b }),
		"history":     mutate(func(b []byte) []byte { b[10] = 5; return b }),
		"record size": mutate(func(b []byte) []byte { b[16]++; return b }),
		"truncated":   good[:len(good)-1],
		"action":      mutate(func(b []byte) []byte { b[HeaderSize+2] = 2; return b }),
		"subflows":    mutate(func(b []byte) []byte { b[HeaderSize] = 3; return b }),
		"nan reward": mutate(func(b []byte) []byte {
			copy(b[HeaderSize+4:], []byte{0, 0, 0xc0, 0x7f})
			return b
		}),
	}
	for name, b := range cases {
		_, err := ReadAll(bytes.NewReader(b))
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
	if ts, err := ReadAll(bytes.NewReader(good)); err != nil || len(ts) != 3 {
		t.Fatalf("good file: %d, %v", len(ts), err)
	}
}

func FuzzReader(f *testing.F) {
	f.Add(sampleFile(f, 2, 2))
	f.Add(sampleFile(f, 1, 1))
	f.Add(sampleFile(f, 8, 1)[:HeaderSize+100])
	f.Add([]byte(FormatMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := NewReader(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("header error %v does not wrap ErrFormat", err)
			}
			return
		}
		for i := 0; i < 1000; i++ {
			var tr Transition
			err := r.Next(&tr)
			if err == io.EOF {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrFormat) {
					t.Fatalf("record error %v does not wrap ErrFormat", err)
				}
				return
			}
			if tr.S.N < 1 || tr.S.N > r.Slots() || math.IsNaN(float64(tr.R)) {
				t.Fatalf("accepted invalid transition %+v", tr)
			}
		}
	})
}
