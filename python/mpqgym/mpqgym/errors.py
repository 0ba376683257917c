"""Exceptions of mpqgym. Every failure of the Go side surfaces as one of
these, never as a hang."""


class MpqGymError(Exception):
    """Base class of mpqgym's errors."""


class BinaryNotFound(MpqGymError):
    """The Go command mpq-gym is missing and cannot be built here."""


class InvalidAction(MpqGymError, ValueError):
    """The action is not in the action space, or names a path slot that holds
    no path in the current observation."""


class EmulatorDied(MpqGymError):
    """The mpq-gym process exited or closed its pipe."""


class EnvTimeout(MpqGymError, TimeoutError):
    """mpq-gym did not answer within the step timeout (wall-clock seconds);
    the process has been killed."""


class ScenarioError(MpqGymError, ValueError):
    """The scenario or options were refused by the emulator."""


class EpisodeError(MpqGymError):
    """The episode ended before its first decision (the session could not be
    set up)."""


class ProtocolError(MpqGymError):
    """A frame the protocol does not allow at this point (a bug)."""
