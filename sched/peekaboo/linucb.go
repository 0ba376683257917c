package peekaboo

import (
	"encoding"
	"encoding/binary"
	"errors"
	"math"
)

// dim is the number of context features.
const dim = 6

// vec is a context or weight vector.
type vec = [dim]float64

// mat is a 6×6 matrix, row-major.
type mat = [dim][dim]float64

// arm is one action's disjoint LinUCB model: A = I + Σ x·xᵀ and b = Σ r·x
// over the acknowledged decisions that took this action, with A⁻¹ and
// θ = A⁻¹·b cached so that a decision only does matrix-vector products.
type arm struct {
	a     mat // A, 6×6, symmetric positive definite, every eigenvalue ≥ 1
	b     vec // b = Σ r·x, in (MB/s)²: reward times context
	inv   mat // A⁻¹, recomputed whenever A changes
	theta vec // θ = A⁻¹·b, recomputed whenever A or b changes
}

// reset sets A = I and b = 0.
func (m *arm) reset() {
	m.a, m.b, m.inv, m.theta = mat{}, vec{}, mat{}, vec{}
	for i := range dim {
		m.a[i][i], m.inv[i][i] = 1, 1
	}
}

// mean is θᵀx.
func (m *arm) mean(x *vec) float64 { return dot(&m.theta, x) }

// ucb is θᵀx + α·√(xᵀA⁻¹x).
func (m *arm) ucb(x *vec, alpha float64) float64 {
	q := quad(&m.inv, x)
	return m.mean(x) + alpha*math.Sqrt(max(q, 0)) // rounding may take q a hair below 0
}

// quad is xᵀMx for a symmetric M (A⁻¹ is symmetric, as A is): the diagonal
// plus twice the upper triangle, 21 products instead of 36, summed in three
// independent chains so the multiplications overlap (Decide's hot spot).
func quad(m *mat, x *vec) float64 {
	x0, x1, x2, x3, x4, x5 := x[0], x[1], x[2], x[3], x[4], x[5]
	d := m[0][0]*x0*x0 + m[1][1]*x1*x1 + m[2][2]*x2*x2 +
		m[3][3]*x3*x3 + m[4][4]*x4*x4 + m[5][5]*x5*x5
	u := x0*(m[0][1]*x1+m[0][2]*x2+m[0][3]*x3+m[0][4]*x4+m[0][5]*x5) +
		x1*(m[1][2]*x2+m[1][3]*x3+m[1][4]*x4+m[1][5]*x5)
	v := x2*(m[2][3]*x3+m[2][4]*x4+m[2][5]*x5) +
		x3*(m[3][4]*x4+m[3][5]*x5) +
		x4*m[4][5]*x5
	return d + 2*(u+v)
}

// update is the rank-1 LinUCB step A += x·xᵀ, b += r·x. It changes nothing
// and returns false if the inputs are not finite or A would not invert.
func (m *arm) update(x *vec, r float64) bool {
	if !finite(r) {
		return false
	}
	for _, v := range x {
		if !finite(v) {
			return false
		}
	}
	a, b := m.a, m.b
	for i := range dim {
		for j := range dim {
			a[i][j] += x[i] * x[j]
		}
		b[i] += r * x[i]
	}
	return m.set(&a, &b)
}

// set installs A and b if A inverts, and refreshes A⁻¹ and θ.
func (m *arm) set(a *mat, b *vec) bool {
	var inv mat
	if !invert(a, &inv) {
		return false
	}
	m.a, m.b, m.inv = *a, *b, inv
	for i := range dim {
		m.theta[i] = dot(&inv[i], b)
	}
	return true
}

// invert computes inv = a⁻¹ by Gauss-Jordan elimination with partial
// pivoting, on fixed-size arrays (no allocation). It returns false if a is
// singular to working precision or the result is not finite.
func invert(a *mat, inv *mat) bool {
	m := *a
	*inv = mat{}
	for i := range dim {
		inv[i][i] = 1
	}
	var scale float64 // largest |a_ij|, for the singularity threshold
	for i := range dim {
		for j := range dim {
			scale = max(scale, math.Abs(m[i][j]))
		}
	}
	if scale == 0 || !finite(scale) {
		return false
	}
	for c := range dim {
		p := c
		for r := c + 1; r < dim; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		if math.Abs(m[p][c]) <= scale*1e-15 {
			return false
		}
		m[c], m[p] = m[p], m[c]
		inv[c], inv[p] = inv[p], inv[c]
		d := 1 / m[c][c]
		for j := range dim {
			m[c][j] *= d
			inv[c][j] *= d
		}
		for r := range dim {
			if r == c || m[r][c] == 0 {
				continue
			}
			f := m[r][c]
			for j := range dim {
				m[r][j] -= f * m[c][j]
				inv[r][j] -= f * inv[c][j]
			}
		}
	}
	for i := range dim {
		for j := range dim {
			if !finite(inv[i][j]) {
				return false
			}
		}
	}
	return true
}

// positiveDefinite reports whether the symmetric matrix a has a Cholesky
// factorisation, that is whether it is positive definite.
func positiveDefinite(a *mat) bool {
	var l mat
	for i := range dim {
		for j := 0; j <= i; j++ {
			s := a[i][j]
			for k := 0; k < j; k++ {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if !(s > 0) {
					return false
				}
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	return true
}

func dot(a, b *vec) float64 {
	var s float64
	for i := range dim {
		s += a[i] * b[i]
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Model encoding (MarshalBinary/UnmarshalBinary): the 4-byte magic "PKB1",
// then for the WAIT arm and then the SEND arm, A as 36 float64 in row-major
// order followed by b as 6 float64, each IEEE-754 little-endian.
const (
	modelMagic = "PKB1"
	armFloats  = dim*dim + dim
	modelSize  = len(modelMagic) + numArms*armFloats*8
)

// Errors returned by UnmarshalBinary.
var (
	ErrModelSize   = errors.New("peekaboo: model has the wrong size")
	ErrModelMagic  = errors.New("peekaboo: model does not start with \"PKB1\"")
	ErrModelValues = errors.New("peekaboo: model holds a NaN or infinite value")
	ErrModelMatrix = errors.New("peekaboo: model A is not symmetric positive definite with a diagonal ≥ 1")
)

// MarshalBinary exports the learned model (A and b of both actions), for
// UnmarshalBinary on a later connection. It implements
// encoding.BinaryMarshaler and never fails.
func (s *Scheduler) MarshalBinary() ([]byte, error) {
	buf := make([]byte, 0, modelSize)
	buf = append(buf, modelMagic...)
	for k := range s.arms {
		m := &s.arms[k]
		for i := range dim {
			for j := range dim {
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(m.a[i][j]))
			}
		}
		for i := range dim {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(m.b[i]))
		}
	}
	return buf, nil
}

// UnmarshalBinary imports a model written by MarshalBinary. It checks the
// size and magic, that every value is finite, and that each A is symmetric
// (to a relative 1e-9), has a diagonal ≥ 1, is positive definite and
// inverts; on any error the scheduler's model is left unchanged. Pending
// decisions are kept. It implements encoding.BinaryUnmarshaler.
func (s *Scheduler) UnmarshalBinary(data []byte) error {
	if len(data) != modelSize {
		return ErrModelSize
	}
	if string(data[:len(modelMagic)]) != modelMagic {
		return ErrModelMagic
	}
	var arms [numArms]arm
	p := data[len(modelMagic):]
	next := func() float64 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(p))
		p = p[8:]
		return v
	}
	for k := range arms {
		var a mat
		var b vec
		for i := range dim {
			for j := range dim {
				a[i][j] = next()
			}
		}
		for i := range dim {
			b[i] = next()
		}
		if err := validate(&a, &b); err != nil {
			return err
		}
		if !arms[k].set(&a, &b) {
			return ErrModelMatrix
		}
	}
	s.arms = arms
	return nil
}

// validate checks an imported A and b.
func validate(a *mat, b *vec) error {
	for i := range dim {
		if !finite(b[i]) {
			return ErrModelValues
		}
		for j := range dim {
			if !finite(a[i][j]) {
				return ErrModelValues
			}
		}
	}
	for i := range dim {
		if !(a[i][i] >= 1) {
			return ErrModelMatrix
		}
		for j := i + 1; j < dim; j++ {
			d := math.Abs(a[i][j] - a[j][i])
			if d > 1e-9*max(math.Abs(a[i][j]), math.Abs(a[j][i]), 1) {
				return ErrModelMatrix
			}
		}
	}
	if !positiveDefinite(a) {
		return ErrModelMatrix
	}
	return nil
}

var (
	_ encoding.BinaryMarshaler   = (*Scheduler)(nil)
	_ encoding.BinaryUnmarshaler = (*Scheduler)(nil)
)
