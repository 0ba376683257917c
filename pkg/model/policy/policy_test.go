package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/model/internal/modeltest"
	"github.com/mpqsched/mpqsched/pkg/model/ort"
	"github.com/mpqsched/mpqsched/sched/edar"
)

func TestOpenMissingCorruptSynthetic(t *testing.T) {
	dir := t.TempDir()
	// The error names the file; it does not advise `make train`, which is
	// not the fix for a mistyped path (issue 20, item 1).
	if _, _, err := Open(filepath.Join(dir, "none.onnx"), Options{}); err == nil || !strings.Contains(err.Error(), "none.onnx") || strings.Contains(err.Error(), "make train") {
		t.Errorf("missing model: %v", err)
	}
	bad := filepath.Join(dir, "bad.onnx")
	os.WriteFile(bad, []byte("not a model"), 0o644)
	if _, _, err := Open(bad, Options{}); err == nil {
		t.Error("corrupt model accepted")
	}
	if _, _, err := Open(modeltest.Model("a"), Options{}); !errors.Is(err, ErrSynthetic) {
		t.Errorf("synthetic model: %v, want ErrSynthetic", err)
	}
}

func TestOpenBackends(t *testing.T) {
	var logs []string
	o := Options{AllowSynthetic: true, Log: func(s string) { logs = append(logs, s) }}
	t.Setenv(BackendEnv, "gonet")
	p, b, err := Open(modeltest.Model("a"), o)
	if err != nil || b != PureGo {
		t.Fatalf("forced gonet: %v %v", b, err)
	}
	s := edar.State{N: 2}
	var q [2]float32
	if err := p.Q(&s, &q); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BackendEnv, "")
	p, b, err = Open(modeltest.Model("a"), o)
	if err != nil {
		t.Fatal(err)
	}
	if ort.Init() != nil {
		// No library: the pure-Go backend, said in the log.
		if b != PureGo || len(logs) != 1 || !strings.Contains(logs[0], "gonet") {
			t.Fatalf("backend %v, logs %q", b, logs)
		}
		if os.Getenv("MPQ_REQUIRE_ORT") == "1" {
			t.Fatal("MPQ_REQUIRE_ORT=1 but onnxruntime is missing")
		}
		return
	}
	if b != ONNXRuntime {
		t.Fatalf("backend %v with the library present; logs %q", b, logs)
	}
	var q2 [2]float32
	if err := p.Q(&s, &q2); err != nil {
		t.Fatal(err)
	}
}

func TestSwapAndCache(t *testing.T) {
	var sw Swap
	var q [2]float32
	s := edar.State{N: 1}
	if err := sw.Q(&s, &q); err == nil {
		t.Fatal("empty Swap answered")
	}
	c := Cache{Options: Options{AllowSynthetic: true}}
	p, _, first, err := c.Get(modeltest.Model("a"))
	if err != nil || !first {
		t.Fatal(err, first)
	}
	if _, _, first, _ := c.Get(modeltest.Model("a")); first {
		t.Fatal("opened twice")
	}
	sw.Set(p)
	if err := sw.Q(&s, &q); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.Get("/nonexistent.onnx"); err == nil {
		t.Fatal("missing model cached as good")
	}
}

func TestResolve(t *testing.T) {
	if got := Resolve("testdata/nonexistent.onnx"); got != "testdata/nonexistent.onnx" {
		t.Errorf("Resolve of a missing file = %q", got)
	}
	if got := Resolve("go.mod"); !strings.HasSuffix(got, "go.mod") || !filepath.IsAbs(got) {
		t.Errorf("Resolve(go.mod) = %q", got)
	}
}

// A model trained on states of another format version (docs/edar-format.md,
// "Changing the format") would read this build's features as something
// else, so it gets a clear error instead of decisions.
func TestCheckFormat(t *testing.T) {
	cur := strconv.Itoa(edar.FormatVersion)
	if err := checkFormat(map[string]string{"edar.format_version": cur}); err != nil {
		t.Fatalf("current version refused: %v", err)
	}
	for _, meta := range []map[string]string{
		{"edar.format_version": strconv.Itoa(edar.FormatVersion - 1)},
		{"edar.format_version": strconv.Itoa(edar.FormatVersion + 1)},
		{},
	} {
		err := checkFormat(meta)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "make train") {
			t.Errorf("metadata %v: %v, want ErrFormat saying how to retrain", meta, err)
		}
	}
}

// The shipped model was trained on this build's state format.
func TestShippedModelFormat(t *testing.T) {
	path := Resolve(DefaultModel)
	if _, err := os.Stat(path); err != nil {
		t.Skipf("no shipped model: %v", err)
	}
	if _, _, err := Open(path, Options{}); err != nil {
		t.Fatal(err)
	}
}
