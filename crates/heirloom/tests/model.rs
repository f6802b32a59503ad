//! Property test: random operation sequences of three agents against a
//! sequential model of hierarchical locking (no-wait policy, so a single
//! driver never blocks): every mode including U, skip-locked tries, early
//! unlock, and (in a second run of every sequence) lock escalation at two
//! rows per table. After every step the lock table's snapshot must list
//! exactly the holders the model has.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread;

use heirloom::{ConflictPolicy, Level, LockId, LockManager, Mode, TableId, TableKind};
use proptest::prelude::*;

#[derive(Clone, Copy, Debug)]
enum Op {
    Lock(usize, LockId, Mode),
    TryLock(usize, LockId, Mode),
    Unlock(usize, LockId),
    Commit(usize),
    Abort(usize),
}

enum Cmd {
    Lock(LockId, Mode),
    TryLock(LockId, Mode),
    Unlock(LockId),
    Commit,
    Abort,
}

/// Escalation threshold of the second run: every second row escalates.
const ESCALATE_AT: usize = 2;

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
                    Cmd::TryLock(id, m) => {
                        let r = match t.try_lock(id, m) {
                            Ok(true) => Ok(()),
                            Ok(false) => Err("busy".to_string()),
                            Err(e) => Err(e.kind().to_string()),
                        };
                        rtx.send(r).unwrap()
                    }
                    Cmd::Unlock(id) => rtx.send(t.unlock(id).map_err(|e| e.kind().to_string())).unwrap(),
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
    escalate: bool,
}

impl Model {
    fn conflicts(&self, me: usize, id: LockId, m: Mode) -> bool {
        self.txns
            .iter()
            .enumerate()
            .any(|(i, t)| i != me && t.held.get(&id).is_some_and(|h| !h.compatible(m)))
    }

    /// `lock` (`skip`: `try_lock`, which fails with "busy" and does not
    /// doom), then a due escalation.
    fn lock(&mut self, a: usize, id: LockId, mode: Mode, skip: bool) -> Result<(), String> {
        if self.txns[a].doomed {
            return Err("doomed".into());
        }
        let path = id.path();
        let ids = path.as_slice();
        let mut new_row = false;
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
                return Err(self.refuse(a, skip));
            }
            new_row |= lid.level() == Level::Row && !self.txns[a].held.contains_key(&lid);
            self.txns[a].held.insert(lid, target);
        }
        let table = LockId::table(id.table_id().expect("rows and tables only"));
        if self.escalate && new_row && self.rows_under(a, table) >= ESCALATE_AT {
            self.escalate(a, table, skip)?;
        }
        Ok(())
    }

    fn refuse(&mut self, a: usize, skip: bool) -> String {
        if skip {
            "busy".into()
        } else {
            self.txns[a].doomed = true;
            "would-block".into()
        }
    }

    fn rows_under(&self, a: usize, table: LockId) -> usize {
        self.txns[a].held.keys().filter(|id| table.is_ancestor_of(id)).count()
    }

    /// The table lock becomes S (all rows shared) or X, joined with what it
    /// was; the rows it covers go. Under skip a busy table is left alone.
    fn escalate(&mut self, a: usize, table: LockId, skip: bool) -> Result<(), String> {
        let t = &self.txns[a];
        let esc = if t
            .held
            .iter()
            .filter(|(id, _)| table.is_ancestor_of(id))
            .all(|(_, m)| matches!(m, Mode::IS | Mode::S))
        {
            Mode::S
        } else {
            Mode::X
        };
        let held = t.held[&table];
        let to = held.join(esc);
        if !held.covers(to) {
            if self.conflicts(a, table, to) {
                return if skip { Ok(()) } else { Err(self.refuse(a, false)) };
            }
            self.txns[a].held.insert(table, to);
        }
        self.txns[a]
            .held
            .retain(|id, m| !(table.is_ancestor_of(id) && to.covers_descendants(*m)));
        Ok(())
    }

    fn unlock(&mut self, a: usize, id: LockId) -> Result<(), String> {
        let t = &mut self.txns[a];
        if t.doomed {
            return Err("doomed".into());
        }
        if !t.held.contains_key(&id) {
            return Err("not-held".into());
        }
        if t.held.keys().any(|h| id.is_ancestor_of(h)) {
            return Err("children-held".into());
        }
        t.held.remove(&id);
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
    let mode = prop::sample::select(vec![Mode::IS, Mode::IX, Mode::S, Mode::SIX, Mode::X, Mode::U]);
    let id = (0u32..2, prop::option::of(0u64..3)).prop_map(|(t, r)| {
        let t = TableId::new(0, t);
        match r {
            Some(r) => LockId::row(t, r),
            None => LockId::table(t),
        }
    });
    let any = (0u32..2, prop::option::of(0u64..3)).prop_map(|(t, r)| {
        let t = TableId::new(0, t);
        match (t.table, r) {
            (_, Some(r)) => LockId::row(t, r),
            (0, None) => LockId::table(t),
            (_, None) => LockId::database(0),
        }
    });
    prop_oneof![
        7 => (0usize..3, id.clone(), mode.clone()).prop_map(|(a, id, m)| Op::Lock(a, id, m)),
        2 => (0usize..3, id, mode).prop_map(|(a, id, m)| Op::TryLock(a, id, m)),
        2 => (0usize..3, any).prop_map(|(a, id)| Op::Unlock(a, id)),
        1 => (0usize..3).prop_map(Op::Commit),
        1 => (0usize..3).prop_map(Op::Abort),
    ]
}

fn check(kind: TableKind, ops: &[Op]) -> Result<(), TestCaseError> {
    check_with(kind, ops, false)?;
    check_with(kind, ops, true)
}

fn check_with(kind: TableKind, ops: &[Op], escalate: bool) -> Result<(), TestCaseError> {
    let lm = LockManager::builder()
        .table(kind)
        .conflicts(ConflictPolicy::NoWait)
        .escalate_after(if escalate { ESCALATE_AT as u32 } else { 0 })
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
        escalate,
    };
    for &op in ops {
        let (a, real, expected) = match op {
            Op::Lock(a, id, m) => {
                actors[a].tx.send(Cmd::Lock(id, m)).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.lock(a, id, m, false))
            }
            Op::TryLock(a, id, m) => {
                actors[a].tx.send(Cmd::TryLock(id, m)).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.lock(a, id, m, true))
            }
            Op::Unlock(a, id) => {
                actors[a].tx.send(Cmd::Unlock(id)).unwrap();
                (a, actors[a].rx.recv().unwrap(), model.unlock(a, id))
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
        prop_assert_eq!(&real, &expected, "agent {} after {:?} (escalation {})", a, op, escalate);
        let snap = lm.snapshot();
        let mut seen: BTreeMap<LockId, BTreeSet<(u32, Mode)>> = BTreeMap::new();
        for l in &snap.locks {
            prop_assert!(l.waiters.is_empty(), "no-wait never queues: {}", snap);
            for h in &l.holders {
                let who = *index.get(&h.txn.agent()).expect("known agent");
                seen.entry(l.lock).or_default().insert((who, h.mode));
            }
        }
        prop_assert_eq!(seen, model.holders(), "after {:?} (escalation {})", op, escalate);
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
    fn latched_table_with_spares_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::LatchedSpares, &ops)?;
    }

    #[test]
    fn latchfree_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::LatchFree, &ops)?;
    }

    #[test]
    fn latchfree_swap_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::LatchFreeSwap, &ops)?;
    }

    #[test]
    fn server_table_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        check(TableKind::Server { partitions: 2 }, &ops)?;
    }
}
