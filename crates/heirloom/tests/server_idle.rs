//! An idle lock server parks: it burns no CPU while no client sends it
//! anything (Linux only: read from /proc). Alone in its test binary, so
//! that no other test's servers are counted.

mod common;

#[cfg(target_os = "linux")]
#[test]
fn an_idle_server_burns_no_cpu() {
    use std::time::Duration;

    use heirloom::{LockId, LockManager, Mode, TableId, TableKind};

    /// Each lock-server thread of this process: its scheduler state ("R",
    /// "S", ...) and its CPU ticks (user + system).
    fn servers() -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
            let dir = e.expect("a task").path();
            let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if !comm.starts_with("heirloom-lock-s") {
                continue;
            }
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            // Fields after the parenthesised name: state is 3rd, utime 14th, stime 15th.
            let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
            let f: Vec<&str> = rest.split_whitespace().collect();
            if f.len() > 12 {
                let ticks = f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
                out.push((f[0].to_owned(), ticks));
            }
        }
        out
    }

    /// How many server threads there are, and their ticks together.
    fn server_ticks() -> (usize, u64) {
        let s = servers();
        (s.len(), s.iter().map(|x| x.1).sum())
    }

    /// How many server threads are asleep.
    fn asleep() -> usize {
        servers().iter().filter(|x| x.0 == "S").count()
    }

    let lm = LockManager::builder()
        .table(TableKind::Server { partitions: 2 })
        .build();
    let mut a = lm.agent();
    for k in 0..10_000 {
        let mut t = a.begin();
        t.lock(LockId::row(TableId::new(0, 1), k), Mode::X).unwrap();
        t.commit().unwrap();
    }
    // Wait until both servers have run out of work and parked: asleep
    // ("S") in two looks 50 ms apart, however long a loaded machine takes.
    common::until("the servers never parked", || {
        asleep() == 2 && {
            std::thread::sleep(Duration::from_millis(50));
            asleep() == 2
        }
    });
    let (threads, before) = server_ticks();
    assert_eq!(threads, 2, "two server threads");
    std::thread::sleep(Duration::from_millis(1000));
    let (_, after) = server_ticks();
    // A spinning server would gain about 100 ticks a second per thread.
    assert!(
        after - before <= 2,
        "idle servers used {} ticks in a second",
        after - before
    );
    drop(a);
    drop(lm);
    common::until("the servers stop with the manager", || server_ticks().0 == 0);
}
