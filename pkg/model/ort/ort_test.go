package ort

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mpqsched/mpqsched/pkg/model/gonet"
	"github.com/mpqsched/mpqsched/pkg/model/internal/modeltest"
	"github.com/mpqsched/mpqsched/sched/edar"
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

// TestWatcherClosesReplacedSession hot-swaps model b over model a and checks
// that the replaced onnxruntime session is freed and the new one answers.
func TestWatcherClosesReplacedSession(t *testing.T) {
	needLibrary(t)
	dir := t.TempDir()
	live := filepath.Join(dir, "edar.onnx")
	install := func(name string, mod time.Time) {
		b, err := os.ReadFile(modeltest.Model(name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(live+".tmp", b, 0o644)
		os.Chtimes(live+".tmp", mod, mod)
		os.Rename(live+".tmp", live)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var applied []*Net
	w := &edar.Watcher{
		Path:  live,
		Load:  func(p string) (edar.Policy, error) { return Load(p) },
		Apply: func(p edar.Policy) { applied = append(applied, p.(*Net)) },
		Close: true,
	}
	install("a", t0)
	if ok, err := w.Check(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	install("b", t0.Add(time.Minute))
	if ok, err := w.Check(); !ok || err != nil {
		t.Fatal(ok, err)
	}
	s := modeltest.State(rand.New(rand.NewPCG(1, 2)), 2)
	var q [2]float32
	if err := applied[0].Q(&s, &q); err == nil {
		t.Fatal("replaced session still answers")
	}
	if err := applied[1].Q(&s, &q); err != nil {
		t.Fatal(err)
	}
	applied[1].Close()
}
