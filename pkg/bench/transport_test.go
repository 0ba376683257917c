package bench

import "testing"

// Matrix.Transport "both" runs every scheduler, scenario and seed once on
// each path's stream and once in datagrams (Job.Datagram), "datagram" only
// in datagrams, and "" or "stream" only on the stream.
func TestMatrixTransport(t *testing.T) {
	for _, tc := range []struct {
		transport string
		jobs, dg  int
	}{{"", 4, 0}, {"stream", 4, 0}, {"datagram", 4, 4}, {"both", 8, 4}} {
		jobs, err := Matrix{Schedulers: "minrtt,blest", Scenarios: "hetero-2path", Seeds: 2, Seed: 1, Transport: tc.transport}.Jobs()
		if err != nil {
			t.Fatal(err)
		}
		dg := 0
		for _, j := range jobs {
			if j.Datagram {
				dg++
			}
		}
		if len(jobs) != tc.jobs || dg != tc.dg {
			t.Errorf("Transport %q: %d jobs, %d in datagrams; want %d and %d", tc.transport, len(jobs), dg, tc.jobs, tc.dg)
		}
	}
}
