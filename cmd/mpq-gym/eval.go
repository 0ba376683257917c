package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"github.com/mpqsched/mpqsched/pkg/model/gympolicy"
)

// evalPolicy answers `mpq-gym -eval MODEL`: for each JSON line on stdin (an
// object of observation arrays by key, any nesting, as numpy's tolist()
// writes them) it prints {"logits": [...], "backend": "..."} or {"error":
// "..."}. python/mpqgym's export test uses it to check that the Go side
// computes what the trainer computed.
func evalPolicy(path string) int {
	p, err := gympolicy.Load(path, func(s string) { fmt.Fprintln(os.Stderr, "mpq-gym:", s) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "mpq-gym:", err)
		return 1
	}
	defer p.Close()
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(os.Stdout)
	var out [1 << 9]float32
	for sc.Scan() {
		var raw map[string]any
		if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			continue
		}
		in := map[string][]float32{}
		for k, v := range raw {
			in[k] = flat(v, nil)
		}
		n, err := p.Eval(in, out[:])
		if err != nil {
			enc.Encode(map[string]string{"error": err.Error()})
			continue
		}
		enc.Encode(map[string]any{"logits": out[:n], "backend": p.Backend()})
	}
	return 0
}

// flat appends the numbers of a nested JSON array to dst.
func flat(v any, dst []float32) []float32 {
	switch x := v.(type) {
	case float64:
		return append(dst, float32(x))
	case []any:
		for _, e := range x {
			dst = flat(e, dst)
		}
	}
	return dst
}
