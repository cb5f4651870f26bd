//! Data pools: named lists of byte-string values, such as the ids of the tasks a setup
//! phase created, that per-iteration variables (see [`crate::spec::variables`]) draw from.
//!
//! A pool has two parts. The initial part comes from the plan (`"pools": {"task_ids":
//! ["1", "2"]}`) and is shared read-only by every thread through an `Arc`. The local part
//! holds the values this thread captured during the run; it is never shared, so a capture
//! takes no lock. Index `i` of a pool addresses the initial values first, then the local
//! ones.
//!
//! The local part of each pool is bounded at [`LOCAL_MAX_VALUES`] values and
//! [`LOCAL_MAX_BYTES`] bytes: once either is reached, further captures are refused (the
//! values already there keep their indices, so sequential cursors stay stable) and counted
//! in [`Pools::refused`].
//!
//! Pool ids are given in order of creation: the plan's pools in name order, then each
//! [`Pools::ensure`]d one. Ensure every pool a capture fills before [`Pools::fork`]ing the
//! per-thread copies so that ids agree across threads.

use std::collections::BTreeMap;
use std::sync::Arc;

/// PoolSpecs is the plan's `pools` object: each pool's name and its initial values.
pub(crate) type PoolSpecs = BTreeMap<String, Vec<String>>;

/// LOCAL_MAX_VALUES is the most values one pool's local (captured) part holds per thread.
pub(crate) const LOCAL_MAX_VALUES: usize = 1_000_000;

/// LOCAL_MAX_BYTES is the most value bytes one pool's local (captured) part holds per thread.
pub(crate) const LOCAL_MAX_BYTES: usize = 64 << 20;

/// Local is one pool's captured values, stored back to back in one buffer.
#[derive(Debug, Default)]
struct Local {
    bytes: Vec<u8>,
    /// ends[i] is the end offset of value i in `bytes`; value i starts at ends[i-1] (or 0).
    ends: Vec<usize>,
    refused: u64,
}

impl Local {
    fn get(&self, index: usize) -> Option<&[u8]> {
        let end = *self.ends.get(index)?;
        let start = if index == 0 { 0 } else { self.ends[index - 1] };
        self.bytes.get(start..end)
    }
}

/// Pools is one thread's view of every data pool: shared initial values plus this
/// thread's captured ones.
#[derive(Debug, Default)]
pub(crate) struct Pools {
    ids: BTreeMap<String, usize>,
    names: Vec<String>,
    initial: Vec<Arc<[Vec<u8>]>>,
    local: Vec<Local>,
}

impl Pools {
    /// new builds pools from the plan's initial values, with empty local parts; ids follow
    /// the name order of `initial`.
    pub(crate) fn new(initial: &PoolSpecs) -> Pools {
        let mut pools = Pools::default();
        for (name, values) in initial {
            let values: Arc<[Vec<u8>]> = values.iter().map(|v| v.as_bytes().to_vec()).collect();
            pools.add(name, values);
        }
        pools
    }

    fn add(&mut self, name: &str, values: Arc<[Vec<u8>]>) -> usize {
        let id = self.names.len();
        self.ids.insert(name.to_string(), id);
        self.names.push(name.to_string());
        self.initial.push(values);
        self.local.push(Local::default());
        id
    }

    /// fork returns a copy for another thread: the same ids and shared initial values
    /// (no copy of them), and empty local parts.
    pub(crate) fn fork(&self) -> Pools {
        Pools {
            ids: self.ids.clone(),
            names: self.names.clone(),
            initial: self.initial.clone(),
            local: self.names.iter().map(|_| Local::default()).collect(),
        }
    }

    /// ensure returns the id of pool `name`, creating it empty if it does not exist yet.
    pub(crate) fn ensure(&mut self, name: &str) -> usize {
        match self.ids.get(name) {
            Some(&id) => id,
            None => self.add(name, Arc::from(Vec::new())),
        }
    }

    /// id returns the id of pool `name`, or None if there is no such pool.
    pub(crate) fn id(&self, name: &str) -> Option<usize> {
        self.ids.get(name).copied()
    }

    /// names lists the pool names in id order.
    pub(crate) fn names(&self) -> &[String] {
        &self.names
    }

    /// len is the current number of values of pool `id` (initial plus local); 0 for an
    /// unknown id.
    pub(crate) fn len(&self, id: usize) -> usize {
        self.initial.get(id).map_or(0, |v| v.len()) + self.local.get(id).map_or(0, |l| l.ends.len())
    }

    /// is_empty reports whether pool `id` has no value (or does not exist).
    #[cfg(test)]
    pub(crate) fn is_empty(&self, id: usize) -> bool {
        self.len(id) == 0
    }

    /// get returns value `index` of pool `id`, counting the initial values first and then
    /// the local ones; an out-of-range index or unknown id yields an empty slice.
    pub(crate) fn get(&self, id: usize, index: usize) -> &[u8] {
        let Some(initial) = self.initial.get(id) else {
            return &[];
        };
        if let Some(value) = initial.get(index) {
            return value;
        }
        self.local.get(id).and_then(|l| l.get(index - initial.len())).unwrap_or(&[])
    }

    /// push appends `value` to the local part of pool `id` and returns true, or returns
    /// false (and counts a refusal) when the local part is full or `id` is unknown. It
    /// allocates only when the local buffers grow.
    pub(crate) fn push(&mut self, id: usize, value: &[u8]) -> bool {
        let Some(local) = self.local.get_mut(id) else {
            return false;
        };
        if local.ends.len() >= LOCAL_MAX_VALUES || local.bytes.len() + value.len() > LOCAL_MAX_BYTES {
            local.refused += 1;
            return false;
        }
        local.bytes.extend_from_slice(value);
        local.ends.push(local.bytes.len());
        true
    }

    /// refused is the number of captures into pool `id` that [`Pools::push`] refused
    /// because the local part was full.
    #[cfg(test)]
    pub(crate) fn refused(&self, id: usize) -> u64 {
        self.local.get(id).map_or(0, |l| l.refused)
    }

    /// take_local removes and returns the captured values of every pool that has any,
    /// by pool name (bytes that are not UTF-8 are replaced with U+FFFD); the refusal
    /// counts are kept.
    pub(crate) fn take_local(&mut self) -> PoolSpecs {
        let mut taken = PoolSpecs::new();
        for (name, local) in self.names.iter().zip(&mut self.local) {
            if local.ends.is_empty() {
                continue;
            }
            let values = (0..local.ends.len())
                .filter_map(|i| local.get(i))
                .map(|v| String::from_utf8_lossy(v).into_owned())
                .collect();
            taken.insert(name.clone(), values);
            local.bytes = Vec::new();
            local.ends = Vec::new();
        }
        taken
    }
}

/// merge appends the values of every pool in `from` to the pool of the same name in
/// `into`, creating it if needed (e.g. to combine the captures of several threads).
pub(crate) fn merge(into: &mut PoolSpecs, from: PoolSpecs) {
    for (name, values) in from {
        into.entry(name).or_default().extend(values);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn specs(pools: &[(&str, &[&str])]) -> PoolSpecs {
        pools
            .iter()
            .map(|(name, values)| (name.to_string(), values.iter().map(std::string::ToString::to_string).collect()))
            .collect()
    }

    #[test]
    fn initial_then_local() {
        let mut pools = Pools::new(&specs(&[("b", &["x", "y"]), ("a", &[])]));
        assert_eq!(pools.names(), ["a", "b"]);
        let (a, b) = (pools.id("a"), pools.id("b"));
        assert_eq!((a, b, pools.id("c")), (Some(0), Some(1), None));
        assert!(pools.push(1, b"z"));
        assert!(pools.push(1, b""));
        assert!(pools.push(0, b"only"));
        let cases: &[(usize, usize, &[u8])] = &[
            (1, 0, b"x"),
            (1, 1, b"y"),
            (1, 2, b"z"),
            (1, 3, b""),
            (1, 4, b""),
            (0, 0, b"only"),
            (0, 1, b""),
            (9, 0, b""),
        ];
        for (id, index, want) in cases {
            assert_eq!(pools.get(*id, *index), *want, "pool {id} index {index}");
        }
        assert_eq!((pools.len(0), pools.len(1), pools.len(9)), (1, 4, 0));
        assert!(!pools.push(9, b"nowhere"));
    }

    #[test]
    fn ensure_creates_once() {
        let mut pools = Pools::new(&specs(&[("a", &["1"])]));
        assert_eq!(pools.ensure("a"), 0);
        assert_eq!(pools.ensure("new"), 1);
        assert_eq!(pools.ensure("new"), 1);
        assert!(pools.is_empty(1));
        assert_eq!(pools.len(0), 1);
    }

    #[test]
    fn fork_shares_initial_not_local() {
        let mut pools = Pools::new(&specs(&[("a", &["1", "2"])]));
        pools.ensure("captured");
        pools.push(0, b"3");
        let fork = pools.fork();
        assert_eq!(fork.id("captured"), Some(1));
        assert_eq!((fork.len(0), pools.len(0)), (2, 3));
        assert!(Arc::ptr_eq(&fork.initial[0], &pools.initial[0]));
    }

    #[test]
    fn take_local_reports_and_clears() {
        let mut pools = Pools::new(&specs(&[("a", &["1"]), ("b", &[])]));
        pools.ensure("c");
        pools.push(0, b"2");
        pools.push(2, b"x");
        pools.push(2, &[0xff, b'y']);
        let taken = pools.take_local();
        assert_eq!(taken, specs(&[("a", &["2"]), ("c", &["x", "\u{fffd}y"])]));
        assert_eq!((pools.len(0), pools.len(2)), (1, 0));
        assert!(pools.take_local().is_empty());
    }

    #[test]
    fn local_part_is_bounded() {
        let mut pools = Pools::default();
        let id = pools.ensure("p");
        for i in 0..LOCAL_MAX_VALUES {
            assert!(pools.push(id, if i % 2 == 0 { b"" } else { b"v" }));
        }
        assert!(!pools.push(id, b"late"));
        assert_eq!((pools.len(id), pools.refused(id)), (LOCAL_MAX_VALUES, 1));
        assert_eq!(pools.get(id, LOCAL_MAX_VALUES - 1), b"v");

        let big = vec![b'x'; LOCAL_MAX_BYTES / 2];
        let id = pools.ensure("big");
        assert!(pools.push(id, &big));
        assert!(pools.push(id, &big));
        assert!(!pools.push(id, b"x"));
        assert_eq!((pools.len(id), pools.refused(id)), (2, 1));
    }

    #[test]
    fn merge_appends() {
        let mut into = specs(&[("a", &["1"])]);
        merge(&mut into, specs(&[("a", &["2"]), ("b", &["3"])]));
        assert_eq!(into, specs(&[("a", &["1", "2"]), ("b", &["3"])]));
    }
}
