//! The five TPC-C transactions (clause 2), each under strict two-phase
//! locking through its `Tx`: row locks taken as the rows are read or
//! written, undo kept for rollback.

use super::*;

impl Tpcc {
    /// The current date and time (O_ENTRY_D, H_DATE, OL_DELIVERY_D), in
    /// microseconds since 1970 and never 0 (0 is "not delivered"). The
    /// system clock, as the specification says, rather than a counter
    /// that every terminal would write to.
    pub(super) fn now(&self) -> u64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_micros() as u64)
            .max(1)
    }

    /// The customer's id: by id, or the middle one (rounded up) of those with
    /// the last name sorted by C_FIRST (clause 2.5.2.2), each S-locked to
    /// read its first name.
    pub(super) fn resolve(&self, tx: &mut Tx<'_, '_, '_>, w: u64, d: u64, who: Who) -> Result<Option<u64>, TxError> {
        match who {
            Who::Id(c) => Ok(Some(c)),
            Who::Last(last) => {
                let mut found = Vec::new();
                self.customer_by_name
                    .scan(name_key(w, d, last, 0)..=name_key(w, d, last, 0xffff), |_, c| {
                        found.push(c);
                        true
                    });
                let mut named = Vec::with_capacity(found.len());
                for c in found {
                    if let Some(slot) = tx.find(&self.customer, c_key(w, d, c), Mode::S)? {
                        named.push((self.customer.get(slot, f::C_FIRST), c));
                    }
                }
                if named.is_empty() {
                    return Ok(None);
                }
                named.sort_unstable();
                Ok(Some(named[(named.len() - 1) / 2].1))
            }
        }
    }

    pub(super) fn new_order<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        w: u64,
        d: u64,
        c: u64,
        items: &[(u64, u64, u64)],
    ) -> Result<Outcome, TxError> {
        let ws = tx.find(&self.warehouse, w, Mode::S)?.expect("warehouse");
        std::hint::black_box(self.warehouse.get(ws, f::W_TAX));
        let ds = tx.find(&self.district, d_key(w, d), Mode::X)?.expect("district");
        let o = self.district.get(ds, f::D_NEXT_O_ID);
        tx.set(&self.district, ds, f::D_NEXT_O_ID, o + 1);
        let cs = tx.find(&self.customer, c_key(w, d, c), Mode::S)?.expect("customer");
        let discount = self.customer.get(cs, f::C_DISCOUNT);
        let all_local = items.iter().all(|&(_, s, _)| s == w) as u64;
        if self.inserts {
            let now = self.now();
            let fresh = tx.insert(&self.order, o_key(w, d, o), &[c, now, 0, items.len() as u64, all_local])?;
            debug_assert!(fresh, "D_NEXT_O_ID is taken under the district's X lock");
            tx.insert(&self.new_order, o_key(w, d, o), &[0])?;
            tx.index_insert(&self.order_by_customer, oc_key(w, d, c, o), o);
        }
        let mut total = 0u64;
        for (n, &(i, supply, qty)) in items.iter().enumerate() {
            // Clause 2.4.2.3: an unused item id rolls the transaction back.
            let Some(is) = tx.find(&self.item, i, Mode::S)? else {
                return Ok(Outcome::Failed);
            };
            let price = self.item.get(is, f::I_PRICE);
            let ss = tx.find(&self.stock, s_key(supply, i), Mode::X)?.expect("stock");
            let q = self.stock.get(ss, f::S_QUANTITY);
            tx.set(
                &self.stock,
                ss,
                f::S_QUANTITY,
                if q >= qty + 10 { q - qty } else { q + 91 - qty },
            );
            tx.set(&self.stock, ss, f::S_YTD, self.stock.get(ss, f::S_YTD) + qty);
            tx.set(&self.stock, ss, f::S_ORDER_CNT, self.stock.get(ss, f::S_ORDER_CNT) + 1);
            if supply != w {
                tx.set(
                    &self.stock,
                    ss,
                    f::S_REMOTE_CNT,
                    self.stock.get(ss, f::S_REMOTE_CNT) + 1,
                );
            }
            let amount = qty * price;
            total += amount;
            if self.inserts {
                tx.insert(
                    &self.order_line,
                    ol_key(w, d, o, n as u64 + 1),
                    &[i, supply, 0, qty, amount],
                )?;
            }
        }
        std::hint::black_box(total * (10_000 - discount));
        Ok(Outcome::Committed)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn payment<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        t: &mut Terminal,
        (w, d): (u64, u64),
        (c_w, c_d): (u64, u64),
        who: Who,
        amount: u64,
    ) -> Result<Outcome, TxError> {
        let ws = tx.find(&self.warehouse, w, Mode::X)?.expect("warehouse");
        tx.set(&self.warehouse, ws, f::W_YTD, self.warehouse.get(ws, f::W_YTD) + amount);
        let ds = tx.find(&self.district, d_key(w, d), Mode::X)?.expect("district");
        tx.set(&self.district, ds, f::D_YTD, self.district.get(ds, f::D_YTD) + amount);
        let Some(c) = self.resolve(tx, c_w, c_d, who)? else {
            return Ok(Outcome::Failed);
        };
        let cs = tx.find(&self.customer, c_key(c_w, c_d, c), Mode::X)?.expect("customer");
        let cu = &self.customer;
        tx.set(
            cu,
            cs,
            f::C_BALANCE,
            (cu.get(cs, f::C_BALANCE) as i64 - amount as i64) as u64,
        );
        tx.set(cu, cs, f::C_YTD_PAYMENT, cu.get(cs, f::C_YTD_PAYMENT) + amount);
        tx.set(cu, cs, f::C_PAYMENT_CNT, cu.get(cs, f::C_PAYMENT_CNT) + 1);
        if cu.get(cs, f::C_CREDIT_BC) == 1 {
            // Clause 2.5.2.2: bad credit customers get the payment recorded in C_DATA.
            let data = cu.get(cs, f::C_DATA).rotate_left(7) ^ (c << 32 | d << 16 | w) ^ amount;
            tx.set(cu, cs, f::C_DATA, data);
        }
        if self.inserts {
            let key = ((t.index as u64) << 40) | t.history.len() as u64;
            tx.lock_id(LockId::row(HISTORY, key), Mode::X)?;
        }
        t.history.push(History {
            c: (c_w, c_d, c),
            wd: (w, d),
            amount,
        });
        tx.appended(0);
        Ok(Outcome::Committed)
    }

    pub(super) fn order_status<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        w: u64,
        d: u64,
        who: Who,
    ) -> Result<Outcome, TxError> {
        let Some(c) = self.resolve(tx, w, d, who)? else {
            return Ok(Outcome::Failed);
        };
        let cs = tx.find(&self.customer, c_key(w, d, c), Mode::S)?.expect("customer");
        std::hint::black_box(self.customer.get(cs, f::C_BALANCE));
        let mut newest = None;
        self.order_by_customer
            .scan(oc_key(w, d, c, 0)..=oc_key(w, d, c, u32::MAX as u64), |_, o| {
                newest = Some(o);
                true
            });
        let Some(o) = newest else { return Ok(Outcome::Committed) };
        let Some(os) = tx.find(&self.order, o_key(w, d, o), Mode::S)? else {
            return Ok(Outcome::Committed);
        };
        std::hint::black_box(self.order.get(os, f::O_CARRIER_ID));
        for k in self.order_line.index.range(ol_key(w, d, o, 0)..=ol_key(w, d, o, 15)) {
            if let Some(s) = tx.find(&self.order_line, k.0, Mode::S)? {
                std::hint::black_box(self.order_line.get(s, f::OL_AMOUNT));
            }
        }
        Ok(Outcome::Committed)
    }

    pub(super) fn delivery<'d>(&'d self, tx: &mut Tx<'_, '_, 'd>, w: u64, carrier: u64) -> Result<Outcome, TxError> {
        let now = self.now();
        for d in 1..=DISTRICTS {
            // One Delivery of this district at a time (module docs).
            tx.lock_id(LockId::row(NEW_ORDER, o_key(w, d, 0)), Mode::X)?;
            // The oldest NEW_ORDER row; inserts come only above it (module docs).
            let o = loop {
                let Some((k, _)) = self
                    .new_order
                    .index
                    .first(o_key(w, d, 0)..=o_key(w, d, u32::MAX as u64))
                else {
                    break None;
                };
                if tx.delete(&self.new_order, k)? {
                    break Some(k & 0xffff_ffff);
                }
                // Another Delivery took it meanwhile: look again.
            };
            let Some(o) = o else { continue }; // clause 2.7.4.2: skipped
            let os = tx
                .find(&self.order, o_key(w, d, o), Mode::X)?
                .expect("order of a new order");
            let c = self.order.get(os, f::O_C_ID);
            tx.set(&self.order, os, f::O_CARRIER_ID, carrier);
            let mut sum = 0;
            for (k, _) in self.order_line.index.range(ol_key(w, d, o, 0)..=ol_key(w, d, o, 15)) {
                if let Some(s) = tx.find(&self.order_line, k, Mode::X)? {
                    tx.set(&self.order_line, s, f::OL_DELIVERY_D, now);
                    sum += self.order_line.get(s, f::OL_AMOUNT);
                }
            }
            let cs = tx.find(&self.customer, c_key(w, d, c), Mode::X)?.expect("customer");
            let cu = &self.customer;
            tx.set(
                cu,
                cs,
                f::C_BALANCE,
                (cu.get(cs, f::C_BALANCE) as i64 + sum as i64) as u64,
            );
            tx.set(cu, cs, f::C_DELIVERY_CNT, cu.get(cs, f::C_DELIVERY_CNT) + 1);
        }
        Ok(Outcome::Committed)
    }

    pub(super) fn stock_level<'d>(
        &'d self,
        tx: &mut Tx<'_, '_, 'd>,
        w: u64,
        d: u64,
        threshold: u64,
    ) -> Result<Outcome, TxError> {
        // The district's S lock keeps its last 20 orders' lines stable (module docs).
        let ds = tx.find(&self.district, d_key(w, d), Mode::S)?.expect("district");
        let next = self.district.get(ds, f::D_NEXT_O_ID);
        let lines = self
            .order_line
            .index
            .range(ol_key(w, d, next.saturating_sub(20), 0)..ol_key(w, d, next, 0));
        let mut items = Vec::with_capacity(lines.len());
        for (k, _) in lines {
            if let Some(s) = tx.find(&self.order_line, k, Mode::S)? {
                items.push(self.order_line.get(s, f::OL_I_ID));
            }
        }
        items.sort_unstable();
        items.dedup();
        let mut low = 0;
        for i in items {
            if let Some(s) = tx.find(&self.stock, s_key(w, i), Mode::S)? {
                low += (self.stock.get(s, f::S_QUANTITY) < threshold) as u64;
            }
        }
        std::hint::black_box(low);
        Ok(Outcome::Committed)
    }
}
