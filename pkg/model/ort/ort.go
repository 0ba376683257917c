// Package ort runs the EdAR Q-network exported by training/edar through
// onnxruntime (github.com/yalue/onnxruntime_go, cgo). It implements
// edar.Policy; the transport never imports it.
//
// The shared library is loaded at run time from MPQ_ONNXRUNTIME_LIB, or else
// from third_party/onnxruntime/libonnxruntime.so under the module root (found
// by walking up from the working directory to go.mod). `make onnxruntime`
// puts it there.
package ort

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	onnxruntime "github.com/yalue/onnxruntime_go"

	"github.com/mpqsched/mpqsched/sched/edar"
)

// LibraryEnv names the environment variable that overrides the library path.
const LibraryEnv = "MPQ_ONNXRUNTIME_LIB"

// DefaultLibrary is the library path relative to the module root.
const DefaultLibrary = "third_party/onnxruntime/libonnxruntime.so"

// ErrNoLibrary is wrapped by the error Load returns when the onnxruntime
// shared library is missing.
var ErrNoLibrary = errors.New("onnxruntime shared library not found")

// LibraryPath is where the library is looked for: $MPQ_ONNXRUNTIME_LIB, or
// DefaultLibrary under the nearest directory above the working directory
// that holds go.mod (the working directory itself if there is none).
func LibraryPath() string {
	if p := os.Getenv(LibraryEnv); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		return DefaultLibrary
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, DefaultLibrary)
		}
		if filepath.Dir(d) == d {
			return filepath.Join(dir, DefaultLibrary)
		}
	}
}

// checkLibrary returns an error wrapping ErrNoLibrary, saying how to get the
// library, if path is not a file.
func checkLibrary(path string) error {
	if fi, err := os.Stat(path); err != nil || fi.IsDir() {
		return fmt.Errorf("ort: %w at %s: run `make onnxruntime` (fetches libonnxruntime.so 1.24.1 into %s) or set %s to the library's path",
			ErrNoLibrary, path, DefaultLibrary, LibraryEnv)
	}
	return nil
}

var (
	initOnce sync.Once
	initErr  error
)

// Init loads the library and creates the onnxruntime environment, once per
// process. Load calls it.
func Init() error {
	initOnce.Do(func() {
		if onnxruntime.IsInitialized() {
			return
		}
		path := LibraryPath()
		if initErr = checkLibrary(path); initErr != nil {
			return
		}
		onnxruntime.SetSharedLibraryPath(path)
		if err := onnxruntime.InitializeEnvironment(); err != nil {
			initErr = fmt.Errorf("ort: initialise onnxruntime from %s: %w", path, err)
		}
	})
	return initErr
}

// Net is an onnxruntime session of the Q-network with its input and output
// tensors preallocated (one subflow tensor per subflow count). Q is safe for
// concurrent use (calls are serialised).
type Net struct {
	mu   sync.Mutex
	sess *onnxruntime.DynamicAdvancedSession
	conn *onnxruntime.Tensor[float32]                   // [1, 3]
	sub  [edar.MaxSubflows]*onnxruntime.Tensor[float32] // sub[n-1] is [n, 6, 6]
	q    *onnxruntime.Tensor[float32]                   // [1, 2]
	in   [2]onnxruntime.Value
	out  [1]onnxruntime.Value
}

// Load opens the ONNX model at path with one intra-op and one inter-op
// thread (one decision is far too small to split).
func Load(path string) (*Net, error) {
	if err := Init(); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("ort: %w", err)
	}
	opts, err := onnxruntime.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("ort: %w", err)
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("ort: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("ort: %w", err)
	}
	n := &Net{}
	n.sess, err = onnxruntime.NewDynamicAdvancedSession(path, []string{"conn", "sub"}, []string{"q"}, opts)
	if err != nil {
		return nil, fmt.Errorf("ort: %s: %w", path, err)
	}
	if n.conn, err = onnxruntime.NewEmptyTensor[float32](onnxruntime.NewShape(1, edar.ConnFeatures)); err == nil {
		n.q, err = onnxruntime.NewEmptyTensor[float32](onnxruntime.NewShape(1, 2))
	}
	for i := range n.sub {
		if err == nil {
			n.sub[i], err = onnxruntime.NewEmptyTensor[float32](onnxruntime.NewShape(int64(i+1), edar.HistoryLen, edar.SubflowFeatures))
		}
	}
	if err != nil {
		n.Close()
		return nil, fmt.Errorf("ort: tensors: %w", err)
	}
	n.in[0], n.out[0] = n.conn, n.q
	return n, nil
}

// Close frees the session and its tensors.
func (n *Net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var err error
	if n.sess != nil {
		err = n.sess.Destroy()
		n.sess = nil
	}
	for _, t := range append([]*onnxruntime.Tensor[float32]{n.conn, n.q}, n.sub[:]...) {
		if t != nil {
			t.Destroy()
		}
	}
	n.conn, n.q, n.sub = nil, nil, [edar.MaxSubflows]*onnxruntime.Tensor[float32]{}
	return err
}

// Q implements edar.Policy: q[0] = Q(s, normal), q[1] = Q(s, redundant).
func (n *Net) Q(s *edar.State, q *[2]float32) error {
	if s.N < 1 || s.N > edar.MaxSubflows {
		return fmt.Errorf("ort: state has %d subflows, want 1..%d", s.N, edar.MaxSubflows)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.sess == nil {
		return errors.New("ort: Q on a closed Net")
	}
	copy(n.conn.GetData(), s.Conn[:])
	t := n.sub[s.N-1]
	d := t.GetData()
	k := 0
	for i := 0; i < s.N; i++ {
		for j := range s.Sub[i] {
			k += copy(d[k:], s.Sub[i][j][:])
		}
	}
	n.in[1] = t
	if err := n.sess.Run(n.in[:], n.out[:]); err != nil {
		return fmt.Errorf("ort: %w", err)
	}
	o := n.q.GetData()
	if math.IsNaN(float64(o[0])) || math.IsNaN(float64(o[1])) || math.IsInf(float64(o[0]), 0) || math.IsInf(float64(o[1]), 0) {
		return fmt.Errorf("ort: non-finite Q-value %v", o)
	}
	q[0], q[1] = o[0], o[1]
	return nil
}

var _ edar.Policy = (*Net)(nil)
