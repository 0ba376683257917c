package gympolicy

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"

	onnxruntime "github.com/yalue/onnxruntime_go"

	"github.com/mpqsched/mpqsched/pkg/model/graph"
	"github.com/mpqsched/mpqsched/pkg/model/ort"
	"github.com/mpqsched/mpqsched/pkg/model/policy"
	"github.com/mpqsched/mpqsched/sched/learned"
)

// Policy is a loaded model. Act is safe for concurrent use (calls are
// serialised).
type Policy struct {
	spec    *spec
	backend policy.Backend
	mu      sync.Mutex
	g       *graph.Graph // pure-Go backend, nil on onnxruntime
	gin     map[string]*graph.Tensor
	sess    *onnxruntime.DynamicAdvancedSession
	in      []onnxruntime.Value
	tin     []*onnxruntime.Tensor[float32]
	tout    *onnxruntime.Tensor[float32]
	logits  []float32
}

// Load opens the model at path: the metadata is checked, then onnxruntime
// is tried and, if its library is missing or it refuses the model, the
// pure-Go interpreter (the reason is logged); $MPQ_EDAR_BACKEND=gonet or
// =onnxruntime forces one (pkg/model/policy.BackendEnv). A missing or
// corrupt file, a model that is not an mpqgym policy, or one neither
// backend can run is an error.
func Load(path string, log func(string)) (*Policy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	g, gerr := graph.Parse(b)
	var meta map[string]string
	if g != nil {
		meta = g.Metadata()
	}
	if gerr != nil && !errors.Is(gerr, graph.ErrUnsupported) {
		return nil, fmt.Errorf("policy: %s: not a readable ONNX model: %w", path, gerr)
	}
	s, err := parseSpec(meta)
	if err != nil {
		return nil, fmt.Errorf("policy: %s: %w", path, err)
	}
	p := &Policy{spec: s, logits: make([]float32, s.n)}
	force := os.Getenv(policy.BackendEnv)
	if force != string(policy.PureGo) {
		err := p.openORT(path)
		if err == nil {
			p.backend = policy.ONNXRuntime
			return p, nil
		}
		if force == string(policy.ONNXRuntime) {
			return nil, err
		}
		if gerr != nil {
			return nil, fmt.Errorf("policy: %s: onnxruntime: %v; and the pure-Go interpreter cannot run it: %w", path, err, gerr)
		}
		logf(log, "policy: onnxruntime unavailable for %s, using the pure-Go interpreter: %v", path, err)
	}
	if gerr != nil {
		return nil, fmt.Errorf("policy: %s: %w", path, gerr)
	}
	if err := p.openGraph(g); err != nil {
		return nil, fmt.Errorf("policy: %s: %w", path, err)
	}
	p.backend = policy.PureGo
	return p, nil
}

func logf(l func(string), format string, args ...any) {
	if l != nil {
		l(fmt.Sprintf(format, args...))
	}
}

// Backend is the engine running the model.
func (p *Policy) Backend() policy.Backend { return p.backend }

// EdarState reports whether the model reads EdAR's state: the scheduler
// must then compute it (learned.Config.EdarState).
func (p *Policy) EdarState() bool { return p.spec.edarState() }

// Slots is the model's number of path slots.
func (p *Policy) Slots() int { return p.spec.slots }

func (p *Policy) openGraph(g *graph.Graph) error {
	if g.Output() != Output {
		return fmt.Errorf("output %q, want %q", g.Output(), Output)
	}
	p.g, p.gin = g, map[string]*graph.Tensor{}
	for k, name := range p.spec.inputs {
		shape := make([]int, len(p.spec.shapes[k]))
		for i, d := range p.spec.shapes[k] {
			shape[i] = int(d)
		}
		p.gin[name] = &graph.Tensor{Shape: shape, Data: make([]float32, sizeOf(p.spec.shapes[k]))}
	}
	for _, in := range g.Inputs() {
		if p.gin[in] == nil {
			return fmt.Errorf("graph input %q is not among %s %v", in, MetaInputs, p.spec.inputs)
		}
	}
	return nil
}

func (p *Policy) openORT(path string) error {
	if err := ort.Init(); err != nil {
		return err
	}
	opts, err := onnxruntime.NewSessionOptions()
	if err != nil {
		return fmt.Errorf("ort: %w", err)
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(1); err != nil {
		return err
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return err
	}
	p.sess, err = onnxruntime.NewDynamicAdvancedSession(path, p.spec.inputs, []string{Output}, opts)
	if err != nil {
		return fmt.Errorf("ort: %w", err)
	}
	for _, shape := range p.spec.shapes {
		t, err := onnxruntime.NewEmptyTensor[float32](onnxruntime.NewShape(shape...))
		if err != nil {
			p.Close()
			return fmt.Errorf("ort: %w", err)
		}
		p.tin = append(p.tin, t)
		p.in = append(p.in, t)
	}
	if p.tout, err = onnxruntime.NewEmptyTensor[float32](onnxruntime.NewShape(1, int64(p.spec.n))); err != nil {
		p.Close()
		return fmt.Errorf("ort: %w", err)
	}
	return nil
}

// Close frees onnxruntime's session and tensors.
func (p *Policy) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var err error
	if p.sess != nil {
		err = p.sess.Destroy()
		p.sess = nil
	}
	for _, t := range p.tin {
		t.Destroy()
	}
	if p.tout != nil {
		p.tout.Destroy()
	}
	p.tin, p.in, p.tout = nil, nil, nil
	return err
}

func sizeOf(shape []int64) int {
	n := 1
	for _, d := range shape {
		n *= int(d)
	}
	return n
}

// Logits evaluates the model on o into dst (len ≥ the model's outputs) and
// returns their number.
func (p *Policy) Logits(o *learned.Observation, dst []float32) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.run(func(k int, d []float32) { p.spec.fill(k, o, d) }); err != nil {
		return 0, err
	}
	return copy(dst, p.logits), nil
}

// Eval evaluates the model on input arrays given by observation key (each
// float32, of its input's size, batch axis included) into dst and returns
// the number of logits: the environment's observations, as the agent saw
// them (mpq-gym -eval uses it to check an export against its trainer).
func (p *Policy) Eval(in map[string][]float32, dst []float32) (int, error) {
	for k, name := range p.spec.inputs {
		if n := sizeOf(p.spec.shapes[k]); len(in[name]) != n {
			return 0, fmt.Errorf("policy: input %q has %d values, want %d", name, len(in[name]), n)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.run(func(k int, d []float32) { copy(d, in[p.spec.inputs[k]]) }); err != nil {
		return 0, err
	}
	return copy(dst, p.logits), nil
}

// run evaluates the model with inputs filled by fill(k, dst) for input k.
func (p *Policy) run(fill func(k int, dst []float32)) error {
	switch {
	case p.g != nil:
		for k, name := range p.spec.inputs {
			fill(k, p.gin[name].Data)
		}
		out, err := p.g.Run(p.gin)
		if err != nil {
			return err
		}
		if len(out.Data) != p.spec.n {
			return fmt.Errorf("policy: %d logits, %s %q wants %d", len(out.Data), MetaActions, p.spec.actions, p.spec.n)
		}
		copy(p.logits, out.Data)
	case p.sess != nil:
		for k := range p.spec.inputs {
			fill(k, p.tin[k].GetData())
		}
		if err := p.sess.Run(p.in, []onnxruntime.Value{p.tout}); err != nil {
			return fmt.Errorf("ort: %w", err)
		}
		copy(p.logits, p.tout.GetData())
	default:
		return errors.New("policy: closed")
	}
	for _, v := range p.logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("policy: non-finite logits %v", p.logits)
		}
	}
	return nil
}

// Act implements learned.Policy: the arg max of the logits.
func (p *Policy) Act(o *learned.Observation, a *learned.Action) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.run(func(k int, d []float32) { p.spec.fill(k, o, d) }); err != nil {
		return err
	}
	p.spec.decode(p.logits, o, a)
	return nil
}

var _ learned.Policy = (*Policy)(nil)
