package session

// DatagramWindow is how far behind the newest delivered application
// datagram the receiver remembers which sequence numbers it delivered,
// counted in sequence numbers: a bitmap of DatagramWindow bits (128 bytes)
// per session, whatever the peer sends. A copy of a delivered datagram
// within the window is discarded as a duplicate. A datagram older than the
// window is discarded too, delivered or not, since the receiver cannot tell
// (as IPsec's anti-replay window, RFC 4303 §3.4.3, does): so every datagram
// is delivered at most once, and one that arrives after DatagramWindow or
// more later datagrams of the same sender is lost (Stats.Datagrams.Late).
const DatagramWindow = 1024

// dgramWindow is the receiver's sliding window of delivered datagram
// sequence numbers.
type dgramWindow struct {
	top  uint64                      // 1 + the highest sequence number delivered (0: none yet)
	bits [DatagramWindow / 64]uint64 // bit i set: sequence number top−1−i was delivered
}

// dgramVerdict is what the window says of an arriving sequence number.
type dgramVerdict uint8

const (
	dgramNew  dgramVerdict = iota // not delivered yet: deliver it, then mark it
	dgramDup                      // delivered already: discard
	dgramLate                     // older than the window: discard
)

// check classifies seq without changing the window.
func (w *dgramWindow) check(seq uint64) dgramVerdict {
	if seq >= w.top {
		return dgramNew
	}
	d := w.top - 1 - seq
	if d >= DatagramWindow {
		return dgramLate
	}
	if w.bits[d/64]>>(d%64)&1 != 0 {
		return dgramDup
	}
	return dgramNew
}

// mark records seq as delivered; check(seq) must have said dgramNew. A seq
// above the newest slides the window forward.
func (w *dgramWindow) mark(seq uint64) {
	if seq >= w.top {
		w.slide(seq + 1 - w.top)
		w.top = seq + 1
	}
	d := w.top - 1 - seq
	w.bits[d/64] |= 1 << (d % 64)
}

// slide moves every bit n places toward the old end: bit i becomes bit i+n,
// and bits pushed past the window fall off.
func (w *dgramWindow) slide(n uint64) {
	if n >= DatagramWindow {
		clear(w.bits[:])
		return
	}
	words, b := int(n/64), n%64
	for i := len(w.bits) - 1; i >= 0; i-- {
		var v uint64
		if j := i - words; j >= 0 {
			v = w.bits[j] << b
			if b > 0 && j > 0 {
				v |= w.bits[j-1] >> (64 - b)
			}
		}
		w.bits[i] = v
	}
}
