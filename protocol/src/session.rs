//! The worker's side of the control protocol as a state machine without
//! I/O: when to register, heartbeat or take commands, and what an answer
//! or a failure does to the incarnation. The real worker
//! (`worker/src/control/heartbeat.rs`) and the simulated one of `simtest`
//! both drive it, each with its own calls and its own clock, so the rules
//! the master's fencing relies on are written once.

use crate::command::Command;
use crate::heartbeat::{Registered, Reply, StopAnswer};

/// One worker process's standing with the master.
#[derive(Debug, Default)]
pub struct Session {
    /// The epoch of the current registration; none until one is answered,
    /// and again after the master forgot this incarnation.
    epoch: Option<u64>,
}

/// The call to make next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// Register with full block and cache reports.
    Register,
    /// Take the commands the long poll said are waiting. Not a heartbeat:
    /// its failure says nothing of liveness.
    Take(u64),
    /// Heartbeat under this epoch.
    Beat(u64),
}

/// What an answer asks of the worker.
#[derive(Debug, PartialEq)]
pub enum Answer {
    /// Carry these out; `stop` as the master said (heartbeats only).
    Commands {
        commands: Vec<Command>,
        stop: StopAnswer,
    },
    /// The master does not know this incarnation: it goes back to
    /// registration, and stops whatever it ran (the master has queued
    /// those tasks again and would fence their reports).
    Reregister,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// The epoch heartbeats and reports carry now; none while registering.
    pub fn epoch(&self) -> Option<u64> {
        self.epoch
    }

    /// The next call: a registration until one is answered; then a take
    /// when the long poll `rung`, else a heartbeat.
    pub fn next(&self, rung: bool) -> Call {
        match self.epoch {
            None => Call::Register,
            Some(e) if rung => Call::Take(e),
            Some(e) => Call::Beat(e),
        }
    }

    /// A registration was answered: a new incarnation.
    pub fn registered(&mut self, r: &Registered) {
        self.epoch = Some(r.epoch);
    }

    /// The answer to a heartbeat, a take or a task report of the current
    /// incarnation.
    pub fn answered(&mut self, reply: Reply) -> Answer {
        if reply.reregister {
            self.epoch = None;
            return Answer::Reregister;
        }
        Answer::Commands {
            commands: reply.commands,
            stop: reply.stop,
        }
    }

    /// `call` failed to reach the master or to be answered. A failed
    /// heartbeat sends the worker back to registration, which carries full
    /// reports, since the deltas it carried may be lost; a failed
    /// registration is tried again; a failed take leaves the commands
    /// queued at the master for the next heartbeat.
    pub fn failed(&mut self, call: Call) {
        if let Call::Beat(_) = call {
            self.epoch = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registered(epoch: u64) -> Registered {
        Registered {
            epoch,
            ..Default::default()
        }
    }

    #[test]
    fn registers_first_then_beats_and_takes_when_rung() {
        let mut s = Session::new();
        assert_eq!(s.next(false), Call::Register);
        assert_eq!(
            s.next(true),
            Call::Register,
            "no take before a registration"
        );
        s.registered(&registered(7));
        assert_eq!(s.epoch(), Some(7));
        assert_eq!(s.next(false), Call::Beat(7));
        assert_eq!(s.next(true), Call::Take(7));
    }

    #[test]
    fn a_reregister_answer_or_a_failed_beat_goes_back_to_registration() {
        let mut s = Session::new();
        s.registered(&registered(3));
        assert_eq!(s.answered(Reply::reregister()), Answer::Reregister);
        assert_eq!(s.next(false), Call::Register);

        s.registered(&registered(4));
        s.failed(Call::Take(4));
        assert_eq!(
            s.next(false),
            Call::Beat(4),
            "a failed take keeps the epoch"
        );
        s.failed(Call::Register);
        assert_eq!(s.epoch(), Some(4));
        s.failed(Call::Beat(4));
        assert_eq!(s.next(false), Call::Register);
    }

    #[test]
    fn an_answer_hands_over_its_commands_and_stop_answer() {
        let mut s = Session::new();
        s.registered(&registered(1));
        let stop = StopAnswer {
            unsafe_to_stop: true,
            blocks_to_copy: 2,
        };
        let reply = Reply {
            commands: vec![Command::DeleteBlock(9)],
            stop,
            ..Default::default()
        };
        assert_eq!(
            s.answered(reply),
            Answer::Commands {
                commands: vec![Command::DeleteBlock(9)],
                stop
            }
        );
        assert_eq!(s.epoch(), Some(1));
    }
}
