//! TM1 (Nokia NDBB, later TATP): the SLI paper's main workload.
//!
//! Follows shared/WORKLOADS.md and the TATP description: four tables,
//! seven transactions, the NDBB and forward mixes, failure by design where
//! rows are missing. Phantoms in the CALL_FORWARDING scans are not locked
//! against (no key-range locks); every row read is S-locked and re-found
//! after its lock is granted.

use crate::options::{Kind, Opt, Options};
use crate::runner::{Mix, RunResult, Workload};
use crate::storage::{IndexKind, Outcome, Table, Tx, TxError};
use crate::sweep::{BenchError, Benchmark, Scale, ScaleArg, Sweep};
use crate::workload::random::{nurand, tatp_a};
use crate::workload::{INDEX, index_kind};
use heirloom::{Mode, TableId};
use heirloom_btree::{BTree, Optimistic};
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

/// SUBSCRIBER.
pub const SUBSCRIBER: TableId = TableId::new(1, 1);
/// ACCESS_INFO.
pub const ACCESS_INFO: TableId = TableId::new(1, 2);
/// SPECIAL_FACILITY.
pub const SPECIAL_FACILITY: TableId = TableId::new(1, 3);
/// CALL_FORWARDING.
pub const CALL_FORWARDING: TableId = TableId::new(1, 4);

// SUBSCRIBER fields.
// 0: bit_1..bit_10 in bits 0..10, hex_1..hex_10 in bits 10..50;
// 1: byte2_1..byte2_8; 2: byte2_9..byte2_10; 3: msc_location; 4: vlr_location.
const SUB_BITS_HEX: usize = 0;
const SUB_VLR: usize = 4;
const SUB_WIDTH: usize = 5;
// ACCESS_INFO fields: data1 | data2 << 8; data3 (3 bytes) | data4 (5 bytes) << 24.
const AI_WIDTH: usize = 2;
// SPECIAL_FACILITY fields: is_active | error_cntrl << 8 | data_a << 16; data_b.
const SF_FLAGS: usize = 0;
const SF_WIDTH: usize = 2;
// CALL_FORWARDING fields: end_time; numberx.
const CF_END: usize = 0;
const CF_WIDTH: usize = 2;

/// Transaction types, in the order of [`TRANSACTIONS`].
pub mod kind {
    /// GET_SUBSCRIBER_DATA.
    pub const GET_SUBSCRIBER_DATA: usize = 0;
    /// GET_NEW_DESTINATION.
    pub const GET_NEW_DESTINATION: usize = 1;
    /// GET_ACCESS_DATA.
    pub const GET_ACCESS_DATA: usize = 2;
    /// UPDATE_SUBSCRIBER_DATA.
    pub const UPDATE_SUBSCRIBER_DATA: usize = 3;
    /// UPDATE_LOCATION.
    pub const UPDATE_LOCATION: usize = 4;
    /// INSERT_CALL_FORWARDING.
    pub const INSERT_CALL_FORWARDING: usize = 5;
    /// DELETE_CALL_FORWARDING.
    pub const DELETE_CALL_FORWARDING: usize = 6;
}

/// Transaction names (also the names of the single-transaction mixes).
pub const TRANSACTIONS: &[&str] = &[
    "get-subscriber-data",
    "get-new-destination",
    "get-access-data",
    "update-subscriber-data",
    "update-location",
    "insert-call-forwarding",
    "delete-call-forwarding",
];

/// ACCESS_INFO / SPECIAL_FACILITY key.
#[inline]
pub fn ai_key(s_id: u64, ty: u64) -> u64 {
    (s_id << 8) | ty
}

/// CALL_FORWARDING key.
#[inline]
pub fn cf_key(s_id: u64, sf_type: u64, start: u64) -> u64 {
    (s_id << 16) | (sf_type << 8) | start
}

/// One TM1 transaction's inputs (the TATP parameters of each transaction).
#[allow(missing_docs)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// GET_SUBSCRIBER_DATA.
    GetSubscriberData { s_id: u64 },
    /// GET_NEW_DESTINATION.
    GetNewDestination {
        s_id: u64,
        sf_type: u64,
        start: u64,
        end: u64,
    },
    /// GET_ACCESS_DATA.
    GetAccessData { s_id: u64, ai_type: u64 },
    /// UPDATE_SUBSCRIBER_DATA.
    UpdateSubscriberData {
        s_id: u64,
        sf_type: u64,
        bit_1: u64,
        data_a: u64,
    },
    /// UPDATE_LOCATION.
    UpdateLocation { sub_nbr: u64, vlr: u64 },
    /// INSERT_CALL_FORWARDING.
    InsertCallForwarding {
        sub_nbr: u64,
        sf_type: u64,
        start: u64,
        end: u64,
        numberx: u64,
    },
    /// DELETE_CALL_FORWARDING.
    DeleteCallForwarding { sub_nbr: u64, sf_type: u64, start: u64 },
}

/// The TM1 database.
pub struct Tm1 {
    subscribers: u64,
    /// With TATP's non-uniform s_id: its A and the constant C.
    nurand: Option<(u64, u64)>,
    /// SUBSCRIBER, keyed by s_id.
    pub subscriber: Table,
    /// sub_nbr (the 15-digit string's value) -> s_id; never changes after loading.
    pub sub_nbr: BTree<Optimistic>,
    /// ACCESS_INFO.
    pub access_info: Table,
    /// SPECIAL_FACILITY.
    pub special_facility: Table,
    /// CALL_FORWARDING.
    pub call_forwarding: Table,
}

impl std::fmt::Debug for Tm1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tm1")
            .field("subscribers", &self.subscribers)
            .finish_non_exhaustive()
    }
}

fn distinct_types(rng: &mut SmallRng) -> Vec<u64> {
    let n = rng.random_range(1..=4);
    let mut all = [1u64, 2, 3, 4];
    for i in 0..4 {
        let j = rng.random_range(i..4);
        all.swap(i, j);
    }
    all[..n].to_vec()
}

impl Tm1 {
    /// Bytes needed for `subscribers` (for the memory check).
    pub fn estimate_bytes(subscribers: u64) -> u64 {
        let p = subscribers as usize;
        Table::estimate_bytes(SUB_WIDTH, p)
            + 40 * subscribers
            + Table::estimate_bytes(AI_WIDTH, 4 * p)
            + Table::estimate_bytes(SF_WIDTH, 4 * p)
            + Table::estimate_bytes(CF_WIDTH, 5 * p)
    }

    /// Populates `subscribers` subscribers (TATP population rules).
    /// `nurand` draws s_id non-uniformly: TATP's NURand(A, 1, P), A by the
    /// population ([`tatp_a`]), C drawn once here in [0, A].
    /// SUBSCRIBER, ACCESS_INFO and SPECIAL_FACILITY are indexed by `index`;
    /// CALL_FORWARDING, which transactions insert into and delete from, by
    /// the B+tree.
    pub fn new(subscribers: u64, nurand: bool, seed: u64, index: IndexKind) -> Self {
        let p = subscribers;
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut ai = Vec::new();
        let mut sf = Vec::new();
        let mut cf = Vec::new();
        for s in 1..=p {
            for t in distinct_types(&mut rng) {
                let data3 = rng.random_range(0..1u64 << 24);
                let data4 = rng.random_range(0..1u64 << 40);
                ai.push((
                    ai_key(s, t),
                    [
                        rng.random_range(0..256) | rng.random_range(0..256) << 8,
                        data3 | data4 << 24,
                    ],
                ));
            }
            for t in distinct_types(&mut rng) {
                let active = (rng.random_range(0..100) < 85) as u64;
                let flags = active | rng.random_range(0..256) << 8 | rng.random_range(0..256) << 16;
                sf.push((ai_key(s, t), [flags, rng.random_range(0..1u64 << 40)]));
                // 0-3 call forwardings with distinct start times.
                for start in [0u64, 8, 16] {
                    if rng.random_range(0..2) == 0 {
                        let end = start + rng.random_range(1..=8);
                        cf.push((cf_key(s, t, start), [end, rng.random_range(0..1_000_000_000_000_000)]));
                    }
                }
            }
        }
        let subscriber = Table::with_index("SUBSCRIBER", SUBSCRIBER, SUB_WIDTH, p as usize, index);
        let sub_nbr = BTree::new();
        let access_info = Table::with_index("ACCESS_INFO", ACCESS_INFO, AI_WIDTH, ai.len(), index);
        let special_facility = Table::with_index("SPECIAL_FACILITY", SPECIAL_FACILITY, SF_WIDTH, sf.len(), index);
        // Inserts and deletes of call forwardings balance out; room for
        // drift (storage grows by chunks, so room costs nothing until used).
        let call_forwarding = Table::new("CALL_FORWARDING", CALL_FORWARDING, CF_WIDTH, cf.len() * 4 + 1024);
        for s in 1..=p {
            let mut bits_hex = 0;
            for b in 0..10 {
                bits_hex |= rng.random_range(0..2u64) << b;
            }
            for h in 0..10 {
                bits_hex |= rng.random_range(0..16u64) << (10 + 4 * h);
            }
            let fields = [
                bits_hex,
                rng.random::<u64>(),
                rng.random_range(0..1u64 << 16),
                rng.random::<u32>() as u64,
                rng.random::<u32>() as u64,
            ];
            subscriber.load(s, &fields).expect("sized for the population");
            sub_nbr.insert(s, s);
        }
        for (k, f) in ai {
            access_info.load(k, &f).expect("sized for the population");
        }
        for (k, f) in sf {
            special_facility.load(k, &f).expect("sized for the population");
        }
        for (k, f) in cf {
            call_forwarding.load(k, &f).expect("sized for the population");
        }
        let nurand = nurand.then(|| {
            let a = tatp_a(p);
            (a, rng.random_range(0..=a))
        });
        Tm1 {
            subscribers: p,
            nurand,
            subscriber,
            sub_nbr,
            access_info,
            special_facility,
            call_forwarding,
        }
    }

    /// SELECT s_id FROM subscriber WHERE sub_nbr = ?: the row S-locked.
    fn subscriber_by_nbr(&self, tx: &mut Tx<'_, '_, '_>, sub_nbr: u64) -> Result<Option<u64>, TxError> {
        let Some(s_id) = self.sub_nbr.get(sub_nbr) else {
            return Ok(None);
        };
        Ok(tx.find(&self.subscriber, s_id, Mode::S)?.map(|_| s_id))
    }

    fn s_id(&self, rng: &mut SmallRng) -> u64 {
        let p = self.subscribers;
        match self.nurand {
            None => rng.random_range(1..=p),
            Some((a, c)) => nurand(rng, a, c, 1, p),
        }
    }
}

/// The TM1 benchmark: `--scale` subscribers, option `nurand`.
#[derive(Debug)]
pub struct Tm1Bench;

/// TM1 in the registry.
pub static TM1: Tm1Bench = Tm1Bench;

/// The named mixes.
const MIXES: &[(&str, &[(usize, u32)])] = {
    use kind::*;
    &[
        // The NDBB mix (percentages of the TATP specification).
        (
            "ndbb",
            &[
                (GET_SUBSCRIBER_DATA, 35),
                (GET_NEW_DESTINATION, 10),
                (GET_ACCESS_DATA, 35),
                (UPDATE_SUBSCRIBER_DATA, 2),
                (UPDATE_LOCATION, 14),
                (INSERT_CALL_FORWARDING, 2),
                (DELETE_CALL_FORWARDING, 2),
            ],
        ),
        // The forward mix as the SLI paper prints it (71.4/28.5/28.5), normalised.
        (
            "forward",
            &[
                (GET_NEW_DESTINATION, 714),
                (INSERT_CALL_FORWARDING, 285),
                (DELETE_CALL_FORWARDING, 285),
            ],
        ),
    ]
};

impl Benchmark for Tm1Bench {
    fn name(&self) -> &'static str {
        "tm1"
    }
    fn counts(&self) -> &'static str {
        "txn/s: successful transactions, as TATP's MQTh; total/s adds those that fail by design on missing rows (about 24% of the NDBB mix)"
    }
    fn about(&self) -> &'static str {
        "TM1/TATP: four tables, seven short transactions (the SLI paper's main workload)"
    }
    fn scale(&self) -> Scale {
        Scale {
            unit: "subscribers",
            default: ScaleArg::Total(100_000),
            max: 1 << 40,
        }
    }
    fn mixes(&self) -> &'static [&'static str] {
        &["ndbb", "forward"]
    }
    fn transactions(&self) -> &'static [&'static str] {
        TRANSACTIONS
    }
    fn mix(&self, name: &str) -> Result<Mix, String> {
        Mix::choose("tm1", name, MIXES, TRANSACTIONS)
    }
    fn read_only(&self, mix: &Mix, _options: &Options) -> bool {
        use kind::*;
        mix.weights
            .iter()
            .all(|&(t, _)| matches!(t, GET_SUBSCRIBER_DATA | GET_NEW_DESTINATION | GET_ACCESS_DATA))
    }
    fn options(&self) -> &'static [Opt] {
        &[
            Opt {
                name: "nurand",
                help: "draw s_id non-uniformly (TATP's NURand)",
                kind: Kind::Flag,
                default: "false",
                alias: Some("--nurand"),
            },
            INDEX,
        ]
    }
    fn estimate_bytes(&self, scale: u64, _options: &Options) -> u64 {
        Tm1::estimate_bytes(scale)
    }
    fn run(&self, sweep: &mut Sweep<'_>) -> Result<Vec<RunResult>, BenchError> {
        let (nurand, seed) = (sweep.options().flag("nurand"), sweep.seed());
        let index = index_kind(sweep.options());
        sweep.on_one_db(&|n| Ok(Tm1::new(n, nurand, seed, index)))
    }
}

impl Workload for Tm1 {
    type Input = Input;
    type Worker = ();

    fn name(&self) -> &'static str {
        "tm1"
    }

    fn transactions(&self) -> &'static [&'static str] {
        TRANSACTIONS
    }

    fn worker(&self, _index: usize) {}

    fn input(&self, k: usize, _w: &(), rng: &mut SmallRng) -> Input {
        let s_id = self.s_id(rng);
        let ty = |rng: &mut SmallRng| rng.random_range(1..=4u64);
        let start = |rng: &mut SmallRng| [0u64, 8, 16][rng.random_range(0..3)];
        match k {
            kind::GET_SUBSCRIBER_DATA => Input::GetSubscriberData { s_id },
            kind::GET_NEW_DESTINATION => Input::GetNewDestination {
                s_id,
                sf_type: ty(rng),
                start: start(rng),
                end: rng.random_range(1..=24),
            },
            kind::GET_ACCESS_DATA => Input::GetAccessData { s_id, ai_type: ty(rng) },
            kind::UPDATE_SUBSCRIBER_DATA => Input::UpdateSubscriberData {
                s_id,
                sf_type: ty(rng),
                bit_1: rng.random_range(0..2),
                data_a: rng.random_range(0..256),
            },
            kind::UPDATE_LOCATION => Input::UpdateLocation {
                sub_nbr: s_id,
                vlr: rng.random::<u32>() as u64,
            },
            kind::INSERT_CALL_FORWARDING => {
                let start = start(rng);
                Input::InsertCallForwarding {
                    sub_nbr: s_id,
                    sf_type: ty(rng),
                    start,
                    end: start + rng.random_range(1..=8),
                    numberx: rng.random_range(0..1_000_000_000_000_000),
                }
            }
            _ => Input::DeleteCallForwarding {
                sub_nbr: s_id,
                sf_type: ty(rng),
                start: start(rng),
            },
        }
    }

    fn execute<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, _w: &mut (), input: &Input) -> Result<Outcome, TxError> {
        use Outcome::{Committed, Failed};
        match *input {
            Input::GetSubscriberData { s_id } => {
                let Some(slot) = tx.find(&self.subscriber, s_id, Mode::S)? else {
                    return Ok(Failed);
                };
                let mut sum = 0u64;
                for f in 0..SUB_WIDTH {
                    sum = sum.wrapping_add(self.subscriber.get(slot, f));
                }
                std::hint::black_box(sum);
                Ok(Committed)
            }
            Input::GetNewDestination {
                s_id,
                sf_type,
                start,
                end,
            } => {
                let sf = &self.special_facility;
                let Some(slot) = tx.find(sf, ai_key(s_id, sf_type), Mode::S)? else {
                    return Ok(Failed);
                };
                if sf.get(slot, SF_FLAGS) & 0xff == 0 {
                    return Ok(Failed); // not active
                }
                let cf = &self.call_forwarding;
                let mut keys = [0u64; 3];
                let mut n = 0;
                cf.index
                    .scan(cf_key(s_id, sf_type, 0)..=cf_key(s_id, sf_type, start), |k, _| {
                        keys[n] = k;
                        n += 1;
                        n < keys.len()
                    });
                let mut found = false;
                for &k in &keys[..n] {
                    // Lock, then find again: the row may have gone meanwhile.
                    if let Some(slot) = tx.find(cf, k, Mode::S)? {
                        found |= end < cf.get(slot, CF_END);
                        std::hint::black_box(cf.get(slot, 1));
                    }
                }
                Ok(if found { Committed } else { Failed })
            }
            Input::GetAccessData { s_id, ai_type } => {
                let Some(slot) = tx.find(&self.access_info, ai_key(s_id, ai_type), Mode::S)? else {
                    return Ok(Failed);
                };
                std::hint::black_box(self.access_info.get(slot, 0) ^ self.access_info.get(slot, 1));
                Ok(Committed)
            }
            Input::UpdateSubscriberData {
                s_id,
                sf_type,
                bit_1,
                data_a,
            } => {
                let Some(slot) = tx.find(&self.subscriber, s_id, Mode::X)? else {
                    return Ok(Failed);
                };
                let v = self.subscriber.get(slot, SUB_BITS_HEX);
                tx.set(&self.subscriber, slot, SUB_BITS_HEX, (v & !1) | bit_1);
                let sf = &self.special_facility;
                let Some(fs) = tx.find(sf, ai_key(s_id, sf_type), Mode::X)? else {
                    return Ok(Failed);
                };
                let flags = sf.get(fs, SF_FLAGS);
                tx.set(sf, fs, SF_FLAGS, (flags & !(0xff << 16)) | data_a << 16);
                Ok(Committed)
            }
            Input::UpdateLocation { sub_nbr, vlr } => {
                let Some(s_id) = self.sub_nbr.get(sub_nbr) else {
                    return Ok(Failed);
                };
                let Some(slot) = tx.find(&self.subscriber, s_id, Mode::X)? else {
                    return Ok(Failed);
                };
                tx.set(&self.subscriber, slot, SUB_VLR, vlr);
                Ok(Committed)
            }
            Input::InsertCallForwarding {
                sub_nbr,
                sf_type,
                start,
                end,
                numberx,
            } => {
                let Some(s_id) = self.subscriber_by_nbr(tx, sub_nbr)? else {
                    return Ok(Failed);
                };
                // SELECT sf_type FROM special_facility WHERE s_id = ?: every facility, S-locked.
                let sf = &self.special_facility;
                let mut has_type = false;
                for t in 1..=4 {
                    if sf.index.get(ai_key(s_id, t)).is_some() && tx.find(sf, ai_key(s_id, t), Mode::S)?.is_some() {
                        has_type |= t == sf_type;
                    }
                }
                if !has_type {
                    return Ok(Failed);
                }
                let inserted = tx.insert(&self.call_forwarding, cf_key(s_id, sf_type, start), &[end, numberx])?;
                Ok(if inserted { Committed } else { Failed })
            }
            Input::DeleteCallForwarding {
                sub_nbr,
                sf_type,
                start,
            } => {
                let Some(s_id) = self.subscriber_by_nbr(tx, sub_nbr)? else {
                    return Ok(Failed);
                };
                let deleted = tx.delete(&self.call_forwarding, cf_key(s_id, sf_type, start))?;
                Ok(if deleted { Committed } else { Failed })
            }
        }
    }

    fn undo_append(&self, _w: &mut (), _log: usize) {}

    fn retire(&self, _w: ()) {}

    fn verify(&self) -> Result<String, String> {
        let subs = self.subscriber.rows() as u64;
        if subs != self.subscribers {
            return Err(format!("tm1: {subs} SUBSCRIBER rows, expected {}", self.subscribers));
        }
        for s in [1, self.subscribers] {
            if self.sub_nbr.get(s) != Some(s) {
                return Err(format!("tm1: sub_nbr {s} does not lead to subscriber {s}"));
            }
        }
        let mut bad = None;
        let mut cfs = 0u64;
        self.call_forwarding.index.scan(.., |k, slot| {
            cfs += 1;
            let (s_id, sf_type, start) = (k >> 16, (k >> 8) & 0xff, k & 0xff);
            let end = self.call_forwarding.get(slot as u32, CF_END);
            if self.special_facility.index.get(ai_key(s_id, sf_type)).is_none() {
                bad = Some(format!(
                    "tm1: CALL_FORWARDING ({s_id}, {sf_type}, {start}) has no SPECIAL_FACILITY row"
                ));
            } else if !matches!(start, 0 | 8 | 16) || end <= start || end > start + 8 {
                bad = Some(format!(
                    "tm1: CALL_FORWARDING ({s_id}, {sf_type}, {start}) has end_time {end}"
                ));
            }
            bad.is_none()
        });
        if let Some(b) = bad {
            return Err(b);
        }
        Ok(format!(
            "tm1: {subs} subscribers; all {cfs} CALL_FORWARDING rows have their SPECIAL_FACILITY row and valid times"
        ))
    }
}
