package session

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// The queue returns exactly the bytes appended, in order, whatever the sizes
// of the appends and reads.
func TestByteQueue(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var q byteQueue
	var in, out []byte
	for i := 0; i < 2000; i++ {
		if rng.IntN(2) == 0 {
			b := make([]byte, rng.IntN(3*chunkSize/2))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			q.Append(b)
			in = append(in, b...)
		} else {
			p := make([]byte, rng.IntN(5000))
			n := q.Read(p)
			out = append(out, p[:n]...)
		}
		if q.Len() != len(in)-len(out) {
			t.Fatalf("step %d: Len %d, want %d", i, q.Len(), len(in)-len(out))
		}
	}
	rest := make([]byte, q.Len())
	out = append(out, rest[:q.Read(rest)]...)
	if !bytes.Equal(in, out) {
		t.Fatal("bytes differ")
	}
}

// Next returns the queued bytes in order, and a view it returned keeps its
// contents however much is appended later.
func TestByteQueueNext(t *testing.T) {
	var q byteQueue
	var in, out []byte
	var views [][]byte
	var want [][]byte
	for i := 0; i < 500; i++ {
		b := bytes.Repeat([]byte{byte(i)}, 700+i%900)
		q.Append(b)
		in = append(in, b...)
		v := q.Next(1200)
		views = append(views, v)
		want = append(want, append([]byte(nil), v...))
		out = append(out, v...)
	}
	for q.Len() > 0 {
		out = append(out, q.Next(1200)...)
	}
	if !bytes.Equal(in, out) {
		t.Fatal("bytes differ")
	}
	for i := range views {
		if !bytes.Equal(views[i], want[i]) {
			t.Fatalf("view %d was overwritten", i)
		}
	}
}

// A recycling queue returns the same bytes as a plain one.
func TestByteQueueRecycle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	q := byteQueue{recycle: true}
	var in, out []byte
	for i := 0; i < 3000; i++ {
		if rng.IntN(2) == 0 {
			b := make([]byte, rng.IntN(2*chunkSize))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			q.Append(b)
			in = append(in, b...)
		} else {
			p := make([]byte, rng.IntN(3*chunkSize))
			out = append(out, p[:q.Read(p)]...)
		}
	}
	rest := make([]byte, q.Len())
	out = append(out, rest[:q.Read(rest)]...)
	if !bytes.Equal(in, out) {
		t.Fatal("bytes differ")
	}
}
