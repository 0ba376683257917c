package scenario

// BenchMatrix is mpquic-bench's main job (`make bench`): the default
// scenario, where every scheduler that keeps both paths busy fills both
// windows and lands within a few per cent of the others, beside two where
// the schedulers' rules decide the outcome (a small receive buffer over
// paths of very different RTTs, and a Wi-Fi handoff). Comma-separated, as
// mpquic-bench run -scenarios takes it.
const BenchMatrix = Default + ",rtt10x-256k,wifi-handoff"

// benchScenarios are the scenarios BenchMatrix adds to the default one.
// They are small (8-10 MB): the whole matrix takes as long as the old
// main job did (hetero-2path alone, 3 seeds): 7-8 s on 2 idle cores.
func benchScenarios() []Scenario {
	rtt := Scenario{
		Name: "rtt10x-256k",
		Description: "Paths of very different RTTs behind a small receive buffer: 20 Mbit/s with 10 ms RTT and 10 Mbit/s with 100 ms RTT, lossless, 256 KB receive buffer, 8 MB. " +
			"Data sent on the slow path holds the window until it arrives, so a scheduler that fills the slow path whenever its window opens starves the fast one: schedulers differ here.",
		Tags:          []string{"everyday", "bench", "receive-window", "rtt"},
		Paths:         []PathSpec{sym("fast", link(20, 5, 0)), sym("slow", link(10, 50, 0))},
		Bytes:         8 * MB,
		ReceiveBuffer: 256 * KB,
		Duration:      sec(60),
	}
	wifi := link(20, 5, 0)
	wifi.Handoffs = []Window{win(1, 4)}
	lte := link(10, 30, 0)
	lte.QueueBytes = 512 * KB
	handoff := Scenario{
		Name: "wifi-handoff",
		Description: "A Wi-Fi handoff beside LTE: Wi-Fi 20 Mbit/s, 10 ms RTT, in handoff from 1 s to 4 s (it degrades for half the window, then is unusable); " +
			"LTE 10 Mbit/s, 60 ms RTT, 512 KB queue; 10 MB. Schedulers differ in how long the transfer stalls (max stall) while Wi-Fi fades.",
		Tags:     []string{"everyday", "bench", "handoff", "wireless"},
		Paths:    []PathSpec{sym("wifi", wifi), sym("lte", lte)},
		Bytes:    10 * MB,
		Duration: sec(60),
	}
	return []Scenario{rtt, handoff}
}
