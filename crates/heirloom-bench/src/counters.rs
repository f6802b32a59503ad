//! What a run's measured interval cost the machine (`heirloom bench
//! --counters`): instructions and cycles from the CPU's counters, CPU time
//! and context switches from the kernel, per transaction.
//!
//! Throughput on a shared machine moves with everything else the machine
//! runs; these counts do much less. Each worker counts its own thread from
//! the moment it sees the measured interval begin to the moment it sees it
//! end, the same span in which it counts its transactions, so the totals
//! divide by the run's transactions with no load phase, warm-up or
//! reporting in them (what `perf stat` around the whole command cannot do).
//!
//! - Instructions and cycles: `perf_event_open` on the worker's thread,
//!   user and kernel mode when the kernel allows it (root, or
//!   `kernel.perf_event_paranoid` below 2), else user mode only, which the
//!   report says. Scaled by the time each counter ran if the kernel had to
//!   share the hardware among more counters than it has.
//! - CPU time and context switches (voluntary and not): the thread's
//!   `getrusage(RUSAGE_THREAD)`, which needs no permission.
//!
//! Instructions per transaction are the figure to compare across builds
//! on a noisy machine: they do not depend on what the rest of the machine
//! does, though on a latch or a lock that spins they still grow with
//! contention. Cycles and CPU time show where the time went; `cpus` (CPU
//! time over the interval's length) tells a run that kept every processor
//! busy from one whose threads slept.
//!
//! Counts that cannot be true are not reported. On some virtual machines a
//! counter beyond the few the hypervisor really provides reads zero while
//! the kernel says it ran the whole time: with `perf stat` counting four
//! events beside a run, the workers' cycle counters read 0 (and in some
//! runs `instr/tx` came out at half its value), which no rule of scaling
//! could catch. A thread that used at least
//! [`SILENT_CPU_NS`] of CPU time cannot have retired no instruction or
//! spent no cycle; if any worker's counter says so, the run's counts are
//! left out ([`PerTxn::judge`]) and the report says why.

use serde::Serialize;

/// One worker thread's counts over its part of the measured interval.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Totals {
    /// Instructions retired.
    pub instructions: u64,
    /// CPU cycles.
    pub cycles: u64,
    /// CPU time, user and system, in nanoseconds.
    pub cpu_ns: u64,
    /// Voluntary context switches (a park, a sleep).
    pub voluntary_switches: u64,
    /// Involuntary context switches (preemptions).
    pub involuntary_switches: u64,
    /// Threads whose instruction or cycle counter read zero though they
    /// used at least [`SILENT_CPU_NS`] of CPU time (0 or 1 for one thread).
    pub silent_threads: u64,
    /// Threads counted.
    pub threads: u64,
}

/// The CPU time after which a thread's counters must have counted
/// something: 10 ms, tens of millions of cycles at any clock rate, and
/// far above the kernel's accounting granularity.
pub const SILENT_CPU_NS: u64 = 10_000_000;

impl Totals {
    /// Whether these counts (one thread's) read zero where the thread's CPU
    /// time says they cannot.
    pub fn silent(&self) -> bool {
        self.cpu_ns >= SILENT_CPU_NS && (self.instructions == 0 || self.cycles == 0)
    }
}

impl std::ops::AddAssign for Totals {
    fn add_assign(&mut self, o: Totals) {
        self.instructions += o.instructions;
        self.cycles += o.cycles;
        self.cpu_ns += o.cpu_ns;
        self.voluntary_switches += o.voluntary_switches;
        self.involuntary_switches += o.involuntary_switches;
        self.silent_threads += o.silent_threads;
        self.threads += o.threads;
    }
}

/// A run's counts per completed transaction (the JSON's `counters`).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct PerTxn {
    /// Instructions retired per transaction.
    pub instructions: f64,
    /// CPU cycles per transaction.
    pub cycles: f64,
    /// Instructions per cycle.
    pub ipc: f64,
    /// CPU microseconds per transaction.
    pub cpu_us: f64,
    /// Processors busy on average: the workers' CPU time over the measured
    /// interval's length.
    pub cpus: f64,
    /// Voluntary context switches per transaction (parks, sleeps).
    pub voluntary_switches: f64,
    /// Involuntary context switches per transaction (preemptions).
    pub involuntary_switches: f64,
    /// Whether instructions and cycles include kernel mode.
    pub kernel: bool,
}

/// A run's counts could not be true (see the module's documentation).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{silent} of {threads} worker threads' hardware counters read no instructions or no cycles over at least 10 ms of CPU time each; another program (perf?) is using the counters or the machine's are unreliable, so this run's counts are left out"
)]
pub struct Silent {
    /// Threads whose counters read zero.
    pub silent: u64,
    /// Threads counted.
    pub threads: u64,
}

impl PerTxn {
    /// The run's counts per transaction, unless a worker's counter read
    /// zero where it cannot have ([`Totals::silent`]).
    pub fn judge(t: &Totals, txns: u64, seconds: f64, kernel: bool) -> Result<PerTxn, Silent> {
        if t.silent_threads > 0 {
            return Err(Silent {
                silent: t.silent_threads,
                threads: t.threads,
            });
        }
        Ok(PerTxn::of(t, txns, seconds, kernel))
    }

    /// `t` over `txns` completed transactions in `seconds` of measured time.
    pub fn of(t: &Totals, txns: u64, seconds: f64, kernel: bool) -> PerTxn {
        let n = txns.max(1) as f64;
        PerTxn {
            instructions: t.instructions as f64 / n,
            cycles: t.cycles as f64 / n,
            ipc: if t.cycles == 0 {
                0.0
            } else {
                t.instructions as f64 / t.cycles as f64
            },
            cpu_us: t.cpu_ns as f64 / 1e3 / n,
            cpus: t.cpu_ns as f64 / 1e9 / seconds.max(1e-9),
            voluntary_switches: t.voluntary_switches as f64 / n,
            involuntary_switches: t.involuntary_switches as f64 / n,
            kernel,
        }
    }
}

/// Counters could not be opened.
#[derive(Debug, thiserror::Error)]
#[error(
    "hardware counters are unavailable here ({0}); run as root or lower kernel.perf_event_paranoid, or leave out --counters"
)]
pub struct Unavailable(pub String);

/// Whether counters can be opened here, and in which modes: `Ok(true)`
/// user and kernel, `Ok(false)` user only. Called once before a sweep so
/// that a machine without them fails at once, with one message.
pub fn probe() -> Result<bool, Unavailable> {
    Thread::open_best().map(|(_, kernel)| kernel)
}

impl Thread {
    /// Opens the calling thread's counters in user and kernel mode, or in
    /// user mode if the kernel refuses that; the flag says which.
    pub fn open_best() -> Result<(Thread, bool), Unavailable> {
        match Thread::open(true) {
            Ok(t) => Ok((t, true)),
            Err(_) => Thread::open(false).map(|t| (t, false)),
        }
    }
}

pub use imp::Thread;

#[cfg(target_os = "linux")]
mod imp {
    use super::{Totals, Unavailable};
    use perf_event::events::Hardware;
    use perf_event::{Builder, Counter, Group};

    /// The calling thread's counters (not to be moved to another thread:
    /// they count the thread that opened them).
    pub struct Thread {
        group: Group,
        instructions: Counter,
        cycles: Counter,
        /// `getrusage` at the last `start`.
        since: Option<Usage>,
        totals: Totals,
    }

    #[derive(Clone, Copy)]
    struct Usage {
        cpu_ns: u64,
        voluntary: u64,
        involuntary: u64,
    }

    fn usage() -> Usage {
        // SAFETY: `getrusage` writes a `struct rusage` through the pointer,
        // which points at a zeroed one on this stack; RUSAGE_THREAD asks for
        // the calling thread's figures. It cannot fail with these arguments
        // (EFAULT and EINVAL only), and a zeroed result would read as none.
        let r = unsafe {
            let mut r: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_THREAD, &mut r);
            r
        };
        let ns = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000_000 + t.tv_usec.max(0) as u64 * 1_000;
        Usage {
            cpu_ns: ns(r.ru_utime) + ns(r.ru_stime),
            voluntary: r.ru_nvcsw.max(0) as u64,
            involuntary: r.ru_nivcsw.max(0) as u64,
        }
    }

    impl Thread {
        /// Opens the calling thread's counters, stopped; with `kernel`,
        /// instructions and cycles include kernel mode.
        pub fn open(kernel: bool) -> Result<Thread, Unavailable> {
            let err = |e: std::io::Error| Unavailable(e.to_string());
            let mut group = Group::new().map_err(err)?;
            let open = |kind: Hardware, group: &mut Group| {
                let mut b = Builder::new().group(group).kind(kind);
                b.exclude_kernel(!kernel);
                b.build().map_err(err)
            };
            let instructions = open(Hardware::INSTRUCTIONS, &mut group)?;
            let cycles = open(Hardware::CPU_CYCLES, &mut group)?;
            Ok(Thread {
                group,
                instructions,
                cycles,
                since: None,
                totals: Totals::default(),
            })
        }

        /// Starts counting (again).
        pub fn start(&mut self) -> Result<(), Unavailable> {
            self.since = Some(usage());
            self.group.enable().map_err(|e| Unavailable(e.to_string()))
        }

        /// Stops counting and adds what was counted since `start` to the
        /// totals; nothing if not started. (The hardware counts accumulate
        /// in the kernel across starts and stops, so they are read whole.)
        pub fn stop(&mut self) -> Result<(), Unavailable> {
            let Some(since) = self.since.take() else {
                return Ok(());
            };
            let err = |e: std::io::Error| Unavailable(e.to_string());
            self.group.disable().map_err(err)?;
            let now = usage();
            let counts = self.group.read().map_err(err)?;
            // Prorate if the kernel shared the counters' hardware.
            let (enabled, running) = (counts.time_enabled(), counts.time_running());
            let scale = |c: u64| {
                if running == 0 || running >= enabled {
                    c
                } else {
                    (c as f64 * enabled as f64 / running as f64) as u64
                }
            };
            let get = |c: &Counter| counts.get(c).copied().unwrap_or(0);
            self.totals.instructions = scale(get(&self.instructions));
            self.totals.cycles = scale(get(&self.cycles));
            self.totals.cpu_ns += now.cpu_ns.saturating_sub(since.cpu_ns);
            self.totals.voluntary_switches += now.voluntary.saturating_sub(since.voluntary);
            self.totals.involuntary_switches += now.involuntary.saturating_sub(since.involuntary);
            self.totals.threads = 1;
            self.totals.silent_threads = u64::from(self.totals.silent());
            Ok(())
        }

        /// What was counted between each `start` and its `stop`.
        pub fn totals(&self) -> Totals {
            self.totals
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::{Totals, Unavailable};

    /// No counters off Linux.
    pub struct Thread;

    impl Thread {
        pub fn open(_kernel: bool) -> Result<Thread, Unavailable> {
            Err(Unavailable("they are read through Linux's perf_event_open".into()))
        }
        pub fn start(&mut self) -> Result<(), Unavailable> {
            Ok(())
        }
        pub fn stop(&mut self) -> Result<(), Unavailable> {
            Ok(())
        }
        pub fn totals(&self) -> Totals {
            Totals::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_txn_divides_by_transactions_and_time() {
        let t = Totals {
            instructions: 3_000,
            cycles: 6_000,
            cpu_ns: 2_000_000_000,
            voluntary_switches: 10,
            involuntary_switches: 20,
            silent_threads: 0,
            threads: 2,
        };
        let p = PerTxn::of(&t, 10, 1.0, true);
        assert_eq!(p.instructions, 300.0);
        assert_eq!(p.cycles, 600.0);
        assert_eq!(p.ipc, 0.5);
        assert_eq!(p.cpu_us, 200_000.0);
        assert_eq!(p.cpus, 2.0);
        assert_eq!(p.voluntary_switches, 1.0);
        assert_eq!(p.involuntary_switches, 2.0);
        // No transactions and no cycles: no division by zero.
        let z = PerTxn::of(&Totals::default(), 0, 0.0, false);
        assert_eq!((z.instructions, z.ipc, z.cpus), (0.0, 0.0, 0.0));
    }

    /// A thread that used CPU time and read no cycles or no instructions
    /// is silent; one that barely ran, or counted both, is not; one silent
    /// thread among many takes the whole run's counts out.
    #[test]
    fn a_counter_that_read_nothing_over_cpu_time_takes_the_run_out() {
        let busy = Totals {
            instructions: 50_000_000,
            cycles: 90_000_000,
            cpu_ns: 40_000_000,
            threads: 1,
            ..Totals::default()
        };
        assert!(!busy.silent());
        let no_cycles = Totals { cycles: 0, ..busy };
        let no_instructions = Totals {
            instructions: 0,
            ..busy
        };
        assert!(no_cycles.silent() && no_instructions.silent());
        // Too little CPU time to judge: an idle worker may count nothing.
        let idle = Totals {
            instructions: 0,
            cycles: 0,
            cpu_ns: SILENT_CPU_NS - 1,
            threads: 1,
            ..Totals::default()
        };
        assert!(!idle.silent());

        let mut run = Totals::default();
        for t in [busy, idle, busy] {
            run += t;
        }
        assert_eq!(
            PerTxn::judge(&run, 1_000, 1.0, true),
            Ok(PerTxn::of(&run, 1_000, 1.0, true))
        );
        run += Totals {
            silent_threads: 1,
            ..no_cycles
        };
        let e = PerTxn::judge(&run, 1_000, 1.0, true).unwrap_err();
        assert_eq!((e.silent, e.threads), (1, 4));
        assert!(e.to_string().starts_with("1 of 4 worker threads"), "{e}");
    }

    /// Where the machine has counters, a loop of known length counts at
    /// least its own instructions, and only while started.
    #[test]
    fn a_thread_counts_only_between_start_and_stop() {
        let Ok(kernel) = probe() else {
            eprintln!("skipped: no hardware counters on this machine");
            return;
        };
        let mut t = Thread::open(kernel).expect("probe opened them");
        let spin = |n: u64| {
            let mut x = 0u64;
            for i in 0..n {
                x = std::hint::black_box(x.wrapping_add(i));
            }
            x
        };
        spin(10_000_000); // not counted
        t.start().unwrap();
        spin(1_000_000);
        t.stop().unwrap();
        let once = t.totals();
        assert!(once.instructions >= 1_000_000, "{once:?}");
        assert!(once.instructions < 10_000_000, "{once:?}");
        assert!(once.cycles > 0, "{once:?}");
        spin(10_000_000); // not counted
        assert_eq!(t.totals(), once);
    }
}
