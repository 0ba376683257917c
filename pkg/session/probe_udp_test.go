package session

import (
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/mpqsched/mpqsched/pkg/wire"
)

// The listener answers only a probe with the session's MAC, at most once
// per minProbeAnswerGap, and its answer carries its own MAC (a probe
// reflected back is no answer).
func TestPathProbeAnswerNeedsMAC(t *testing.T) {
	c, _ := (&Config{}).withDefaults()
	s, err := newSession(c, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.id[0], s.joinKey[0] = 1, 2
	probe := func() wire.PathProbe {
		p := wire.PathProbe{SessionID: s.id, Nonce: [wire.PathProbeNonceLen]byte{3}}
		p.MAC = pathProbeMAC(&s.joinKey, &p)
		return p
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	forged := probe()
	forged.MAC[0] ^= 1
	if s.pathProbeAnswer(&forged, t0) {
		t.Fatal("answered a probe with a wrong MAC")
	}
	p := probe()
	if !s.pathProbeAnswer(&p, t0) {
		t.Fatal("did not answer a probe with the session's MAC")
	}
	if mac := pathProbeMAC(&s.joinKey, &p); !p.Answer || p.MAC != mac || p.Nonce != probe().Nonce {
		t.Fatalf("answer %+v: want the probe's nonce and the answer's own MAC", p)
	}
	again := probe()
	if s.pathProbeAnswer(&again, t0.Add(minProbeAnswerGap-time.Millisecond)) {
		t.Errorf("answered twice within %v", minProbeAnswerGap)
	}
	if !s.pathProbeAnswer(&again, t0.Add(minProbeAnswerGap)) {
		t.Errorf("did not answer %v after the last answer", minProbeAnswerGap)
	}
}

// The client takes an answer only for one of the path's latest
// probeNonces probes, within probeAnswerWithin of it, and only while the
// path is silent.
func TestPathProbeAnsweredNeedsNonce(t *testing.T) {
	c, _ := (&Config{}).withDefaults()
	s, err := newSession(c, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return t0 }
	tr := &quic.Transport{}
	p := &path{qtr: tr, tr: &tracer{}}
	s.slots[0] = p
	p.probe.silentFrom = t0.Add(-time.Second)
	p.probe.within = probeAnswerWithin(10 * time.Millisecond) // 30 ms
	for i := range probeNonces + 1 {
		p.probe.nonces[p.probe.nonceN%probeNonces] = [wire.PathProbeNonceLen]byte{byte(i)}
		p.probe.sentAt[p.probe.nonceN%probeNonces] = t0.Add(-5 * time.Millisecond)
		p.probe.nonceN++
	}
	p.probe.sentAt[3] = t0.Add(-40 * time.Millisecond) // nonce 3: sent 40 ms ago, answered too late to count
	s.pathProbeAnswered(tr, [wire.PathProbeNonceLen]byte{3})
	s.pathProbeAnswered(tr, [wire.PathProbeNonceLen]byte{0}) // the oldest, overwritten
	s.pathProbeAnswered(&quic.Transport{}, [wire.PathProbeNonceLen]byte{2})
	if !p.probe.answeredAt.IsZero() || s.stats.probeAnswers != 0 {
		t.Fatal("took an answer too late, to a probe the path no longer waits for, or from another socket")
	}
	s.pathProbeAnswered(tr, [wire.PathProbeNonceLen]byte{2})
	if !p.probe.answeredAt.Equal(t0) || s.stats.probeAnswers != 1 {
		t.Fatalf("answeredAt %v, %d answers: want the answer taken", p.probe.answeredAt, s.stats.probeAnswers)
	}
	p.probe = probeState{nonces: p.probe.nonces, nonceN: p.probe.nonceN} // no longer silent
	s.pathProbeAnswered(tr, [wire.PathProbeNonceLen]byte{2})
	if !p.probe.answeredAt.IsZero() {
		t.Error("took an answer for a path that is not silent")
	}
}
