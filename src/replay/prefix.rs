//! Prefix sums over a replay's item positions: the size of a context prefix in O(1) per item
//! added in order and O(log n) per edit of an older item. Used for the prefix two requests share
//! (what a prompt cache could serve). Pure data structure: no I/O.

/// Prefix sums over item positions, for the size of a context prefix.
///
/// Each item has two slots: `2p` for its head (a result's summary, a call's name, a text) and
/// `2p + 1` for its tail (a result's content or placeholder, a call's arguments). An edit changes
/// only the tail, so the head before it still counts as a shared prefix.
///
/// Items come in order, so most additions are at the highest slot so far: those go to a running
/// sum, one entry per slot, in O(1). Only an addition below it (an edit of an older item) goes to
/// a Fenwick tree, allocated on first use, in O(log n). A replay is thus linear in the items and
/// pays log n per edit only (a Fenwick tree for every addition made a replay n log n).
pub(super) struct Prefix {
    /// Number of slots.
    slots: usize,
    /// `before[k]`: the sum of the in-order additions below slot `k`, for every slot up to the
    /// highest one added so far.
    before: Vec<i64>,
    /// The sum of every in-order addition.
    total: i64,
    /// Additions below the highest slot, made after it was reached (empty until the first).
    tree: Vec<i64>,
}

/// A copy with the room the original has (a forked replay goes on adding in order).
impl Clone for Prefix {
    fn clone(&self) -> Self {
        Prefix {
            slots: self.slots,
            before: super::with_room(&self.before, self.before.capacity()),
            total: self.total,
            tree: self.tree.clone(),
        }
    }
}

impl Prefix {
    pub(super) fn new(slots: usize) -> Self {
        let mut before = Vec::with_capacity(slots + 1);
        before.push(0);
        Prefix { slots, before, total: 0, tree: Vec::new() }
    }

    /// Adds `delta` at `position`: inline for an addition at or above the highest slot so far
    /// (items come in order), out of line for an edit of an older slot.
    #[inline]
    pub(super) fn add(&mut self, position: usize, delta: i64) {
        if position + 1 >= self.before.len() {
            while self.before.len() <= position {
                self.before.push(self.total);
            }
            self.total += delta;
        } else {
            self.add_below(position, delta);
        }
    }

    #[inline(never)]
    fn add_below(&mut self, position: usize, delta: i64) {
        if self.tree.is_empty() {
            self.tree = vec![0; self.slots + 1];
        }
        let mut i = position + 1;
        while i < self.tree.len() {
            self.tree[i] += delta;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over positions `< position`.
    pub(super) fn before(&self, position: usize) -> i64 {
        let mut sum = self.before.get(position).copied().unwrap_or(self.total);
        let mut i = position.min(self.tree.len().saturating_sub(1));
        while i > 0 {
            sum += self.tree[i];
            i -= i & i.wrapping_neg();
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::Prefix;

    #[test]
    fn prefix_sums_agree_with_a_plain_array_whatever_the_order_of_additions() {
        // Mostly in order, as a replay adds items, with edits of older slots and repeated slots.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |bound: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % bound
        };
        for slots in [1usize, 2, 7, 64, 301] {
            let mut prefix = Prefix::new(slots);
            let mut plain = vec![0i64; slots];
            let mut highest = 0usize;
            for _ in 0..4 * slots {
                let position = match next(4) {
                    0 => next(slots as u64) as usize,
                    1 => highest,
                    _ => (highest + next(3) as usize).min(slots - 1),
                };
                highest = highest.max(position);
                let delta = next(200) as i64 - 50;
                prefix.add(position, delta);
                plain[position] += delta;
                for p in 0..=slots + 1 {
                    let want: i64 = plain[..p.min(slots)].iter().sum();
                    assert_eq!(prefix.before(p), want, "{slots} slots, before {p}");
                }
            }
        }
    }
}
