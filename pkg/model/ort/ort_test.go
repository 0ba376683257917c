package ort

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/model/gonet"
	"github.com/mpqsched/mpqsched/pkg/model/internal/modeltest"
)

// needLibrary skips when the onnxruntime library is missing, unless
// MPQ_REQUIRE_ORT=1 (CI), where it fails.
func needLibrary(t testing.TB) {
	t.Helper()
	if err := Init(); err != nil {
		if os.Getenv("MPQ_REQUIRE_ORT") == "1" {
			t.Fatal(err)
		}
		t.Skipf("skipping: %v", err)
	}
}

func TestMissingLibraryErrorSaysHowToGetIt(t *testing.T) {
	err := checkLibrary(filepath.Join(t.TempDir(), "libonnxruntime.so"))
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "make onnxruntime") || !strings.Contains(err.Error(), LibraryEnv) {
		t.Fatalf("error %q", err)
	}
	t.Setenv(LibraryEnv, "/x/lib.so")
	if LibraryPath() != "/x/lib.so" {
		t.Fatal("env override ignored")
	}
}

// TestParity compares onnxruntime with the pure-Go forward pass on random
// states of every subflow count (the dynamic axis).
func TestParity(t *testing.T) {
	needLibrary(t)
	for _, name := range []string{"a", "b"} {
		path := modeltest.Model(name)
		o, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		defer o.Close()
		g, err := gonet.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(11, 13))
		worst := 0.0
		for i := 0; i < 400; i++ {
			s := modeltest.State(rng, 1+i%8)
			var qo, qg [2]float32
			if err := o.Q(&s, &qo); err != nil {
				t.Fatal(err)
			}
			if err := g.Q(&s, &qg); err != nil {
				t.Fatal(err)
			}
			for k := range qo {
				worst = math.Max(worst, math.Abs(float64(qo[k]-qg[k])))
			}
		}
		t.Logf("%s: max |ort − gonet| = %.2g over 400 random states, 1–8 subflows", filepath.Base(path), worst)
		if worst > 1e-5 {
			t.Errorf("%s: backends differ by %g > 1e-5", path, worst)
		}
	}
}

func TestModelCorruptOrMissing(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	if _, err := Load(filepath.Join(dir, "nope.onnx")); err == nil || !strings.Contains(err.Error(), "nope.onnx") {
		t.Fatalf("missing model: %v", err)
	}
	good, err := os.ReadFile(modeltest.Model("a"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"garbage": []byte("not onnx"), "truncated": good[:len(good)/3]} {
		p := filepath.Join(dir, name+".onnx")
		os.WriteFile(p, b, 0o644)
		if n, err := Load(p); err == nil {
			n.Close()
			t.Errorf("%s: loaded", name)
		}
	}
}

func BenchmarkQ(b *testing.B) {
	needLibrary(b)
	n, err := Load(modeltest.Model("a"))
	if err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	modeltest.BenchmarkQ(b, n)
}
