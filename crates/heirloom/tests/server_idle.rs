//! An idle lock server parks: it burns no CPU while no client sends it
//! anything (Linux only: read from /proc). Alone in its test binary, so
//! that no other test's servers are counted.

mod common;

#[cfg(target_os = "linux")]
#[test]
fn an_idle_server_burns_no_cpu() {
    use std::time::Duration;

    use heirloom::{LockId, LockManager, Mode, TableId, TableKind};

    /// CPU ticks (user + system) of this process's lock-server threads.
    fn server_ticks() -> (usize, u64) {
        let mut threads = 0;
        let mut ticks = 0;
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
                threads += 1;
                ticks += f[11].parse::<u64>().unwrap_or(0) + f[12].parse::<u64>().unwrap_or(0);
            }
        }
        (threads, ticks)
    }

    /// The scheduler state of each lock-server thread ("R", "S", ...).
    fn server_states() -> Vec<String> {
        let mut out = Vec::new();
        for e in std::fs::read_dir("/proc/self/task").expect("/proc/self/task") {
            let dir = e.expect("a task").path();
            let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            if comm.starts_with("heirloom-lock-s") {
                let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
                let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
                out.extend(rest.split_whitespace().next().map(str::to_owned));
            }
        }
        out
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
        let asleep = server_states().iter().filter(|s| *s == "S").count() == 2;
        asleep && {
            std::thread::sleep(Duration::from_millis(50));
            server_states().iter().filter(|s| *s == "S").count() == 2
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
