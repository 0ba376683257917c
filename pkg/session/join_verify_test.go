package session

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// refJoinMAC is the join MAC as the protocol defines it (dial.go: HMAC-SHA256
// over "mpqsched join" ‖ session ID ‖ nonce ‖ binding), written separately
// from joinMAC: the message is built in one buffer and the MAC computed in
// one call, so a slip in joinMAC's field order or lengths shows as a
// mismatch.
func refJoinMAC(key []byte, id, nonce []byte, binding []byte) []byte {
	msg := make([]byte, 0, 13+len(id)+len(nonce)+len(binding))
	msg = append(msg, "mpqsched join"...)
	msg = append(msg, id...)
	msg = append(msg, nonce...)
	msg = append(msg, binding...)
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// seq returns n bytes counting up from first.
func seq(first byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = first + byte(i)
	}
	return b
}

// Issue 19, finding 11: "FuzzJoinVerify compares verifyJoin with its own
// definition." The reference MAC is checked against outside answers: the
// HMAC-SHA256 test vectors of RFC 4231 (test cases 1 and 2), and one join
// MAC computed by another implementation (Python's hmac module:
// hmac.new(bytes(range(32)), b"mpqsched join" + id + nonce + binding,
// hashlib.sha256) with id 0x10…0x1f, nonce 0x20…0x2f, binding 0x30…0x4f).
func TestJoinMACKnownAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		key, data []byte
		want      string
	}{
		// RFC 4231 §4.2, Test Case 1.
		{"RFC 4231 case 1", bytes.Repeat([]byte{0x0b}, 20), []byte("Hi There"),
			"b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
		// RFC 4231 §4.3, Test Case 2: "Test with a key shorter than the length of the HMAC output."
		{"RFC 4231 case 2", []byte("Jefe"), []byte("what do ya want for nothing?"),
			"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
	} {
		m := hmac.New(sha256.New, tc.key)
		m.Write(tc.data)
		if got := hex.EncodeToString(m.Sum(nil)); got != tc.want {
			t.Errorf("%s: HMAC-SHA256 = %s, want %s", tc.name, got, tc.want)
		}
	}

	key, id, nonce, binding := seq(0, 32), seq(0x10, 16), seq(0x20, 16), seq(0x30, 32)
	want := mustHex(t, "ee45848432f4a2175c875dc00d5d840c5c20ee29878c317d2fabea6e26c09349")
	if got := refJoinMAC(key, id, nonce, binding); !bytes.Equal(got, want) {
		t.Fatalf("reference join MAC = %x, want %x", got, want)
	}
	j := &wire.Join{SessionID: [16]byte(id), Nonce: [16]byte(nonce), MAC: [32]byte(want)}
	if got := joinMAC(key, j.SessionID, j.Nonce, [32]byte(binding)); !bytes.Equal(got[:], want) {
		t.Errorf("joinMAC = %x, want %x", got, want)
	}
	if !verifyJoin([32]byte(key), j, [32]byte(binding)) {
		t.Error("verifyJoin refused the join MAC of the known answer")
	}
}

// flipJoinBit flips bit i of the 1,024 bits a verifier depends on: session
// ID (bits 0–127), nonce (128–255), MAC (256–511), key (512–767) and
// binding (768–1023). It returns the field's name.
func flipJoinBit(j *wire.Join, key, binding *[32]byte, i int) string {
	i %= 1024
	switch {
	case i < 128:
		j.SessionID[i/8] ^= 1 << (i % 8)
		return "session ID"
	case i < 256:
		i -= 128
		j.Nonce[i/8] ^= 1 << (i % 8)
		return "nonce"
	case i < 512:
		i -= 256
		j.MAC[i/8] ^= 1 << (i % 8)
		return "MAC"
	case i < 768:
		i -= 512
		key[i/8] ^= 1 << (i % 8)
		return "key"
	}
	i -= 768
	binding[i/8] ^= 1 << (i % 8)
	return "binding"
}

// "A join must be authenticated so that nobody else can attach a path to the
// session" (join_test.go), and "a join replayed byte for byte on another
// connection fails" (joinMAC): a MAC from the real key over the real fields
// verifies, and changing any single bit of the session ID, the nonce, the
// MAC, the key or the connection's binding makes it fail.
func TestVerifyJoinEveryBit(t *testing.T) {
	key, binding := [32]byte(seq(0, 32)), [32]byte(seq(0x30, 32))
	good := wire.Join{SessionID: [16]byte(seq(0x10, 16)), Nonce: [16]byte(seq(0x20, 16))}
	good.MAC = [32]byte(refJoinMAC(key[:], good.SessionID[:], good.Nonce[:], binding[:]))
	if !verifyJoin(key, &good, binding) {
		t.Fatal("the genuine join was refused")
	}
	for i := range 1024 {
		j, k, b := good, key, binding
		field := flipJoinBit(&j, &k, &b, i)
		if verifyJoin(k, &j, b) {
			t.Errorf("bit %d of the %s flipped: the join still verifies", i, field)
		}
	}
}

// FuzzJoinVerify: for any key, session ID, nonce and binding, a join carrying
// the reference MAC (refJoinMAC, checked against outside answers in
// TestJoinMACKnownAnswers) verifies after a trip through the wire encoding,
// and fails once any one bit of the session ID, nonce, MAC, key or binding
// differs. A join read from arbitrary bytes verifies exactly when its MAC
// is the reference MAC of its fields.
func FuzzJoinVerify(f *testing.F) {
	f.Add(seq(0, 32), seq(0x10, 16), seq(0x20, 16), seq(0x30, 32), uint16(130), []byte(nil))
	f.Add([]byte{7}, []byte{1}, []byte{2}, []byte{9}, uint16(0), wire.AppendHandshake(nil, &wire.Join{}))
	f.Fuzz(func(t *testing.T, keyb, id, nonce, bind []byte, bit uint16, raw []byte) {
		var key, binding [32]byte
		var j wire.Join
		copy(key[:], keyb)
		copy(binding[:], bind)
		copy(j.SessionID[:], id)
		copy(j.Nonce[:], nonce)
		copy(j.MAC[:], refJoinMAC(key[:], j.SessionID[:], j.Nonce[:], binding[:]))

		fr, err := wire.ReadHandshake(bufio.NewReader(bytes.NewReader(wire.AppendHandshake(nil, &j))))
		got, ok := fr.(*wire.Join)
		if err != nil || !ok || *got != j {
			t.Fatalf("the join did not survive the wire: %v, %+v", err, fr)
		}
		if !verifyJoin(key, got, binding) {
			t.Fatalf("the genuine join was refused (key %x, binding %x)", key, binding)
		}
		k, b := key, binding
		field := flipJoinBit(got, &k, &b, int(bit))
		if verifyJoin(k, got, b) {
			t.Fatalf("bit %d (%s) flipped: the join still verifies", bit%1024, field)
		}

		fr, err = wire.ReadHandshake(bufio.NewReader(bytes.NewReader(raw)))
		if rj, ok := fr.(*wire.Join); err == nil && ok {
			want := hmac.Equal(rj.MAC[:], refJoinMAC(key[:], rj.SessionID[:], rj.Nonce[:], binding[:]))
			if verifyJoin(key, rj, binding) != want {
				t.Fatalf("join from the wire %x: verifyJoin = %v, want %v", raw, !want, want)
			}
		}
	})
}
