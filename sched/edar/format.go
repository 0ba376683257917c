package edar

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Transition files (docs/edar-format.md): a 32-byte header followed by
// fixed-size little-endian records, so numpy reads a file with one
// np.frombuffer and a structured dtype.
const (
	// FormatMagic opens every transition file.
	FormatMagic = "EDARTR"
	// FormatVersion is the version this package writes and reads. It
	// changes whenever a feature or its normalisation changes; a model
	// names the version it was trained on (ONNX metadata
	// edar.format_version), and pkg/model/policy refuses another.
	FormatVersion = 1
	// HeaderSize is the size of the file header, bytes.
	HeaderSize = 32
	// recordPrefix is n, n2, action, done (1 byte each) and the reward (f32).
	recordPrefix = 8
)

// RecordSize is the size in bytes of one record in a file with the given
// number of subflow slots: 8 + 2·4·(ConnFeatures + slots·HistoryLen·SubflowFeatures).
func RecordSize(slots int) int {
	return recordPrefix + 2*4*(ConnFeatures+slots*HistoryLen*SubflowFeatures)
}

// ErrFormat is wrapped by every error about a malformed transition file.
var ErrFormat = errors.New("edar: bad transition file")

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// Writer writes transitions to a file. It buffers; call Flush at the end.
type Writer struct {
	w     *bufio.Writer
	slots int
	buf   []byte
}

// NewWriter writes the header for records of slots subflow slots (1 ≤ slots
// ≤ MaxSubflows; use the largest subflow count the flows have) and returns
// the Writer.
func NewWriter(w io.Writer, slots int) (*Writer, error) {
	if slots < 1 || slots > MaxSubflows {
		return nil, fmt.Errorf("edar: slots %d outside 1..%d", slots, MaxSubflows)
	}
	bw := bufio.NewWriter(w)
	var h [HeaderSize]byte
	copy(h[0:6], FormatMagic)
	le := binary.LittleEndian
	le.PutUint16(h[6:], FormatVersion)
	le.PutUint16(h[8:], uint16(slots))
	le.PutUint16(h[10:], HistoryLen)
	le.PutUint16(h[12:], SubflowFeatures)
	le.PutUint16(h[14:], ConnFeatures)
	le.PutUint32(h[16:], uint32(RecordSize(slots)))
	// h[20:32] reserved, zero
	if _, err := bw.Write(h[:]); err != nil {
		return nil, err
	}
	return &Writer{w: bw, slots: slots, buf: make([]byte, RecordSize(slots))}, nil
}

// Write appends one transition. It fails if a state has more subflows than
// the file's slots.
func (w *Writer) Write(t *Transition) error {
	if t.S.N < 1 || t.S.N > w.slots || t.S2.N < 0 || t.S2.N > w.slots || (t.S2.N == 0 && !t.Done) {
		return fmt.Errorf("edar: transition with %d→%d subflows does not fit %d slots", t.S.N, t.S2.N, w.slots)
	}
	b := w.buf
	b[0], b[1], b[2] = byte(t.S.N), byte(t.S2.N), byte(t.A)
	b[3] = 0
	if t.Done {
		b[3] = 1
	}
	binary.LittleEndian.PutUint32(b[4:], math.Float32bits(t.R))
	off := putState(b, recordPrefix, &t.S, w.slots)
	putState(b, off, &t.S2, w.slots)
	_, err := w.w.Write(b)
	return err
}

// Flush writes buffered records to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

func putState(b []byte, off int, s *State, slots int) int {
	le := binary.LittleEndian
	for _, v := range s.Conn {
		le.PutUint32(b[off:], math.Float32bits(v))
		off += 4
	}
	for i := 0; i < slots; i++ {
		for j := range s.Sub[i] {
			for _, v := range s.Sub[i][j] {
				le.PutUint32(b[off:], math.Float32bits(v))
				off += 4
			}
		}
	}
	return off
}

// Reader reads a transition file, checking every field it can.
type Reader struct {
	r     io.Reader
	slots int
	buf   []byte
	rec   int // records read so far
}

// NewReader reads and checks the header.
func NewReader(r io.Reader) (*Reader, error) {
	var h [HeaderSize]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, formatErr("short header: %v", err)
	}
	if string(h[0:6]) != FormatMagic {
		return nil, formatErr("magic %q, want %q", h[0:6], FormatMagic)
	}
	le := binary.LittleEndian
	if v := le.Uint16(h[6:]); v != FormatVersion {
		return nil, formatErr("version %d, this reader reads %d", v, FormatVersion)
	}
	slots := int(le.Uint16(h[8:]))
	if slots < 1 || slots > MaxSubflows {
		return nil, formatErr("slots %d outside 1..%d", slots, MaxSubflows)
	}
	if hl, sf, cf := le.Uint16(h[10:]), le.Uint16(h[12:]), le.Uint16(h[14:]); hl != HistoryLen || sf != SubflowFeatures || cf != ConnFeatures {
		return nil, formatErr("shape history=%d subflow=%d conn=%d, want %d %d %d", hl, sf, cf, HistoryLen, SubflowFeatures, ConnFeatures)
	}
	if rs := le.Uint32(h[16:]); int(rs) != RecordSize(slots) {
		return nil, formatErr("record size %d, want %d for %d slots", rs, RecordSize(slots), slots)
	}
	for _, c := range h[20:] {
		if c != 0 {
			return nil, formatErr("reserved header bytes are not zero")
		}
	}
	return &Reader{r: r, slots: slots, buf: make([]byte, RecordSize(slots))}, nil
}

// Slots is the number of subflow slots per state in this file.
func (r *Reader) Slots() int { return r.slots }

// Next reads the next transition into t. It returns io.EOF after the last
// record, and an error wrapping ErrFormat for a truncated or invalid one.
func (r *Reader) Next(t *Transition) error {
	n, err := io.ReadFull(r.r, r.buf)
	if err == io.EOF {
		return io.EOF
	}
	if err != nil {
		return formatErr("record %d truncated after %d bytes: %v", r.rec, n, err)
	}
	b := r.buf
	n1, n2, a, done := int(b[0]), int(b[1]), b[2], b[3]
	if n1 < 1 || n1 > r.slots || n2 > r.slots || (n2 == 0 && done == 0) {
		return formatErr("record %d: subflows %d→%d outside 1..%d", r.rec, n1, n2, r.slots)
	}
	if a > 1 || done > 1 {
		return formatErr("record %d: action %d, done %d", r.rec, a, done)
	}
	*t = Transition{A: Mode(a), Done: done == 1}
	t.R = math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
	if !finite(t.R) {
		return formatErr("record %d: reward %v", r.rec, t.R)
	}
	off, err := r.getState(b, recordPrefix, &t.S, n1)
	if err == nil {
		_, err = r.getState(b, off, &t.S2, n2)
	}
	if err != nil {
		return err
	}
	r.rec++
	return nil
}

func (r *Reader) getState(b []byte, off int, s *State, n int) (int, error) {
	le := binary.LittleEndian
	s.N = n
	for i := range s.Conn {
		s.Conn[i] = math.Float32frombits(le.Uint32(b[off:]))
		off += 4
		if !finite(s.Conn[i]) {
			return 0, formatErr("record %d: non-finite connection feature", r.rec)
		}
	}
	for i := 0; i < r.slots; i++ {
		for j := range s.Sub[i] {
			for k := range s.Sub[i][j] {
				v := math.Float32frombits(le.Uint32(b[off:]))
				off += 4
				if !finite(v) {
					return 0, formatErr("record %d: non-finite subflow feature", r.rec)
				}
				if i < n {
					s.Sub[i][j][k] = v
				}
			}
		}
	}
	return off, nil
}

func finite(v float32) bool { return !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) }

// ReadAll reads every transition of a file.
func ReadAll(r io.Reader) ([]Transition, error) {
	tr, err := NewReader(r)
	if err != nil {
		return nil, err
	}
	var out []Transition
	for {
		var t Transition
		switch err := tr.Next(&t); err {
		case nil:
			out = append(out, t)
		case io.EOF:
			return out, nil
		default:
			return out, err
		}
	}
}
