//! Property test: random operation sequences of three agents against a
//! sequential model of hierarchical locking (no-wait policy, so a single
//! driver never blocks). After every step the lock table's snapshot must
//! list exactly the holders the model has.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread;

use heirloom::{ConflictPolicy, LockId, LockManager, Mode, TableId, TableKind};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Op {
    Lock(usize, LockId, Mode),
    Commit(usize),
    Abort(usize),
}

enum Cmd {
    Lock(LockId, Mode),
    Commit,
    Abort,
}

/// One agent on its own thread, driven one command at a time.
struct Actor {
    tx: Sender<Cmd>,
    rx: Receiver<Result<(), String>>,
}

fn spawn_actor(lm: LockManager, ready: Sender<u32>) -> Actor {
    let (tx, crx) = channel::<Cmd>();
    let (rtx, rx) = channel();
    thread::spawn(move || {
        let mut agent = lm.agent();
        ready.send(agent.index()).unwrap();
        'txns: loop {
            let mut t = agent.begin();
            loop {
                let Ok(cmd) = crx.recv() else { break 'txns };
                match cmd {
                    Cmd::Lock(id, m) => rtx.send(t.lock(id, m).map_err(|e| e.kind().to_string())).unwrap(),
                    Cmd::Commit => {
                        rtx.send(t.commit().map_err(|e| e.kind().to_string())).unwrap();
                        continue 'txns;
                    }
                    Cmd::Abort => {
                        t.abort();
                        rtx.send(Ok(())).unwrap();
                        continue 'txns;
                    }
                }
            }
        }
    });
    Actor { tx, rx }
}

#[derive(Default, Clone)]
struct ModelTxn {
    held: BTreeMap<LockId, Mode>,
    doomed: bool,
}

struct Model {
    txns: Vec<ModelTxn>,
}

impl Model {
    fn conflicts(&self, me: usize, id: LockId, m: Mode) -> bool {
        self.txns
            .iter()
            .enumerate()
            .any(|(i, t)| i != me && t.held.get(&id).is_some_and(|h| !h.compatible(m)))
    }

    fn lock(&mut self, a: usize, id: LockId, mode: Mode) -> Result<(), String> {
        if self.txns[a].doomed {
            return Err("doomed".into());
        }
        let path = id.path();
        let ids = path.as_slice();
        for (i, &lid) in ids.iter().enumerate() {
            let last = i == ids.len() - 1;
            let want = if last { mode } else { mode.intention() };
            let target = match self.txns[a].held.get(&lid) {
                Some(&h) if !last && h.covers_descendants(mode) => return Ok(()),
                Some(&h) if h.covers(want) => continue,
                Some(&h) => h.join(want),
                None => want,
            };
            if self.conflicts(a, lid, target) {
                self.txns[a].doomed = true;
                return Err("would-block".into());
            }
            self.txns[a].held.insert(lid, target);
        }
        Ok(())
    }

    fn end(&mut self, a: usize, commit: bool) -> Result<(), String> {
        let doomed = std::mem::take(&mut self.txns[a]).doomed;
        if commit && doomed { Err("doomed".into()) } else { Ok(()) }
    }

    /// lock -> {(agent, mode)}
    fn holders(&self) -> BTreeMap<LockId, BTreeSet<(u32, Mode)>> {
        let mut out: BTreeMap<LockId, BTreeSet<(u32, Mode)>> = BTreeMap::new();
        for (i, t) in self.txns.iter().enumerate() {
            for (&id, &m) in &t.held {
                out.entry(id).or_default().insert((i as u32, m));
            }
        }
        out
    }
}

fn op() -> impl Strategy<Value = Op> {
    let mode = prop::sample::select(vec![Mode::IS, Mode::IX, Mode::S, Mode::SIX, Mode::X]);
    let id = (0u32..2, prop::option::of(0u64..3)).prop_map(|(t, r)| {
        let t = TableId::new(0, t);
        match r {
            Some(r) => LockId::row(t, r),
            None => LockId::table(t),
        }
    });
    prop_oneof![
        8 => (0usize..3, id, mode).prop_map(|(a, id, m)| Op::Lock(a, id, m)),
        1 => (0usize..3).prop_map(Op::Commit),
        1 => (0usize..3).prop_map(Op::Abort),
    ]
}

fn check(kind: TableKind, ops: &[Op]) -> Result<(), TestCaseError> {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::NoWait)
        .build();
    let (rtx, rrx) = channel();
    // Map agent index -> actor number (actors start one at a time).
    let mut index = BTreeMap::new();
    let actors: Vec<Actor> = (0..3u32)
        .map(|n| {
            let a = spawn_actor(lm.clone(), rtx.clone());
            index.insert(rrx.recv().unwrap(), n);
            a
        })
        .collect();
    let mut model = Model {
        txns: vec![ModelTxn::default(); 3],
    };
    for &op in ops {
        let (a, real, expected) = match op {
            Op::Lock(a, id, m) => {
                actors[a].tx.send(Cmd::Lock(id, m)).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.lock(a, id, m))
            }
            Op::Commit(a) => {
                actors[a].tx.send(Cmd::Commit).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.end(a, true))
            }
            Op::Abort(a) => {
                actors[a].tx.send(Cmd::Abort).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.end(a, false))
            }
        };
        prop_assert_eq!(&real, &expected, "agent {} after {:?}", a, op);
        let snap = lm.snapshot();
        let mut seen: BTreeMap<LockId, BTreeSet<(u32, Mode)>> = BTreeMap::new();
        for l in &snap.locks {
            prop_assert!(l.waiters.is_empty(), "no-wait never queues: {}", snap);
            for h in &l.holders {
                let who = *index.get(&h.txn.agent()).expect("known agent");
                seen.entry(l.lock).or_default().insert((who, h.mode));
            }
        }
        prop_assert_eq!(seen, model.holders(), "after {:?}", op);
    }
    drop(actors);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn global_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::Global, &ops)?;
    }

    #[test]
    fn latched_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::Latched, &ops)?;
    }

    #[test]
    fn latchfree_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::LatchFree, &ops)?;
    }
}
