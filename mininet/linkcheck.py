"""The delay check of mpqnet.verify, as pure functions (stdlib only, no
Mininet, no root) so that it can be tested anywhere:
  python3 -m unittest discover -s mininet -p 'test_*.py'
pkg/netem/rttjudge.go applies the same rule to mpq-netns topologies.

The median RTT of at least 20 replies is judged. Not the mean: a few pings
that wait behind a descheduled delay daemon or a busy CPU raise it by
milliseconds (an LLHD router chain read a 21.98 ms mean for a 20.16 ms path
whose fastest ping took 20.84 ms). Not the minimum either: mpq-delayd
releases each packet up to 1 ms before its due time to make up for late
timer wake-ups, so that the mean delay matches, and under CPU load one ping
in forty came back 1.7 ms faster than a two-hop path's configured RTT. The
median ignores both tails as long as fewer than half the replies sit in
them. Jitter (uniform in [delay-jitter, delay+jitter] per direction) leaves
the distribution symmetric about the configured RTT; the tolerance grows by
three standard errors of the sample median. A missing delay, a doubled one
or a delay on one direction only moves every reply, so the median too.

Units: ms for times, fractions for delivery ratios.
"""

import math
import re

MIN_REPLIES = 20  # replies needed before the delay is judged
MAX_PINGS = 1000  # cap on pings per path however lossy the path
PING_SLACK = 1.5  # pings sent per reply needed, beyond the expected loss

_REPLY = re.compile(r"^\d+ bytes from .*time=([0-9.]+) ms")
_SENT = re.compile(r"(\d+) packets transmitted")


def parse_ping(out):
    """(sent, rtts) from iputils ping output without -q: pings sent and each
    reply's RTT in ms (duplicates skipped; iputils truncates a reply's time
    to 0.1 ms between 10 and 100 ms, to 1 ms above). sent is None if the
    output has no summary line (ping could not run)."""
    m = _SENT.search(out)
    if not m:
        return None, []
    rtts = []
    for line in out.splitlines():
        r = _REPLY.match(line)
        if r and "(DUP!)" not in line:
            v = float(r.group(1))
            if math.isfinite(v):
                rtts.append(v)
    return int(m.group(1)), rtts


def ping_count(base, min_replies=MIN_REPLIES, deliver=1.0):
    """Pings to send so that about PING_SLACK * min_replies come back when a
    fraction `deliver` (0..1] of round trips survives the path's loss; at
    least base, at most MAX_PINGS unless base asks for more."""
    need = MAX_PINGS
    if deliver > 0:  # False for NaN
        need = min(math.ceil(PING_SLACK * min_replies / deliver), MAX_PINGS)
    return max(base, need)


def median(xs):
    """Median of a non-empty list."""
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def judge_rtt(rtts, sent, want_ms, jitter_ms, tol_ms, min_replies=MIN_REPLIES):
    """Judge the replies' RTTs (ms) of `sent` pings against want_ms.
    jitter_ms is the sum of both directions' jitter half-widths, tol_ms the
    allowed error. Returns (median_ms, tol_ms, problem): problem is None
    within tolerance, else a message with numbers. Never raises on odd
    input."""
    if len(rtts) < max(min_replies, 1):
        return float("nan"), tol_ms, "only %d of %d pings answered, need %d to judge the delay" % (
            len(rtts), sent or 0, min_replies)
    if any(not math.isfinite(x) for x in rtts):
        return float("nan"), tol_ms, "non-finite RTT among the replies"
    got = median(rtts)
    if jitter_ms > 0:
        # the sample median's standard error is about 1.25 sigma/sqrt(n); sigma
        # of the sum of two uniform jitters is at most (j1+j2)/sqrt(3).
        tol_ms += 3 * 1.25 * jitter_ms / math.sqrt(3) / math.sqrt(len(rtts))
    if abs(got - want_ms) > tol_ms:
        return got, tol_ms, "RTT median %.2f ms of %d replies, want %.2f +- %.2f ms" % (got, len(rtts), want_ms, tol_ms)
    return got, tol_ms, None
