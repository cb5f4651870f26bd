//! Per-iteration variables: values drawn once at the start of each iteration of a virtual
//! user (VU) and seen by every request of that iteration through template slots (see
//! [`crate::spec::template`]).
//!
//! # JSON shape
//!
//! A plan lists variables as objects with a `name`, a kebab-case `type` and that type's
//! fields; unknown fields are rejected. Every type has its own fields next to `name`:
//!
//! ```json
//! {"name": "seq",   "type": "counter", "start": 1, "step": 1}
//! {"name": "n",     "type": "uniform", "min": 1, "max": 100}
//! {"name": "rank",  "type": "zipf", "n": 10000, "s": 1.1}
//! {"name": "verb",  "type": "choice", "values": ["a", "b", "c"], "weights": [70, 25, 5]}
//! {"name": "rid",   "type": "uuid"}
//! {"name": "tag",   "type": "random-string", "length": 12, "alphabet": "abc123"}
//! {"name": "user",  "type": "rows", "columns": ["id", "email"], "rows": [["1", "a@x"]], "pick": "unique"}
//! {"name": "user",  "type": "rows", "columns": ["id", "email"], "cells": "1\u0000a@x\u0000"}
//! {"name": "task",  "type": "pool", "pool": "task_ids", "pick": "zipf", "s": 1.2}
//! {"name": "token", "type": "constant", "value": "abc"}
//! {"name": "temp",  "type": "decimal", "min": 20, "max": 35, "decimals": 1}
//! {"name": "me",    "type": "vu"}
//! {"name": "at",    "type": "timestamp", "unit": "ms"}
//! ```
//!
//! Defaults: counter `start` 1 and `step` 1; choice without `weights` is uniform;
//! random-string `alphabet` is `[A-Za-z0-9]`; rows `pick` is `sequential`; pool `pick` is
//! `random` and its `s` is 1.0 (only allowed with `"pick": "zipf"`).
//!
//! # Slots
//!
//! Each variable fills one slot named after it, except `rows`, which fills one slot per
//! column named `name.column` (`{{user.email}}`). [`VariableSet::slot_names`] lists them in
//! slot order; a caller keeps `slots: Vec<Vec<u8>>` per VU, at least that long, and may
//! put its own slots after them.
//!
//! # Semantics
//!
//! Threads are numbered by a [`ThreadShare`]: thread `i` of `c` among all generator
//! threads of the run (of all machines, for a distributed run). Nothing is shared between
//! threads while drawing, yet:
//!
//! - `counter`: thread `i` yields `start + step*(i + c*k)` for k = 0, 1, 2, …, so values
//!   are unique run-wide and dense overall, though not in time order. Arithmetic wraps
//!   at the i64 range.
//! - `uniform`: an integer in `[min, max]`, both inclusive.
//! - `zipf`: a rank in `1..=n` with `P(k) ∝ 1/k^s` (any `s > 0`, including `s <= 1`).
//! - `choice`: one of `values`, uniformly or with probability proportional to `weights`.
//! - `uuid`: a random version-4 UUID, lowercase and hyphenated.
//! - `random-string`: `length` characters drawn uniformly from `alphabet`.
//! - `rows` `sequential`: thread `i` takes rows `i, i+c, i+2c, …` modulo the row count;
//!   `random`: a uniformly drawn row; `unique`: VU `vu` of thread `i` always gets row
//!   `i + c*vu`, so no two VUs of the run share a row. A draw whose row is past the end is
//!   a [`DrawError`]; the planner avoids it by checking `c * (most VUs on one thread)
//!   <= VariableSet::unique_rows_capacity()` before the run.
//! - `pool`: a value of a data pool ([`crate::spec::pool`]) over its current length (initial
//!   plus this thread's captures): `sequential` takes indices `i, i+c, …` modulo the
//!   length, `random` a uniform index, `zipf` index `Zipf(len, s) - 1` (so the first
//!   values are the hot ones). An empty pool yields an empty value and counts one
//!   [`VariableState::empty_pool_draws`].
//! - `constant`: always `value` (Python resolves environment variables to constants).
//! - `decimal`: a number drawn uniformly from `[min, max]`, written with `decimals` digits.
//! - `vu`: the VU's number, `1 + i + c*vu`: 1-based and unique run-wide within a scenario
//!   (k6's `__VU`).
//! - `timestamp`: the wall-clock time at the iteration's start since the Unix epoch, in
//!   `s`, `ms` (default) or `us`.
//!
//! Drawing allocates nothing once the slot buffers have grown to their values' sizes.

use std::collections::BTreeMap;
use std::fmt;
use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use rand::distr::Distribution;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::Zipf;

use crate::spec::plan_error::PlanError;
use crate::spec::pool::Pools;

mod spec;

pub use spec::TimeUnit;
#[cfg(test)]
use spec::DEFAULT_ALPHABET;
use spec::{compile_kind, is_variable_name, Alphabet, Errors, Kind};
pub use spec::{PoolPick, RowPick, VariableSpec};

/// ThreadShare is a thread's position among all generator threads of a run: thread
/// `index` of `count` (global numbers in a distributed run).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadShare {
    /// index is this thread's number, below count.
    pub index: u64,
    /// count is the number of generator threads of the whole run, at least 1.
    pub count: u64,
}

impl ThreadShare {
    /// SINGLE is the share of the only thread of a run.
    #[cfg(test)]
    pub(crate) const SINGLE: ThreadShare = ThreadShare { index: 0, count: 1 };

    /// part_of is this thread's part of `total` (VUs, iterations) split over all the run's
    /// threads as evenly as possible, the first `total % count` taking one more: the parts
    /// add up to `total`, on one machine or many.
    pub(crate) fn part_of(self, total: u64) -> u64 {
        let count = self.count.max(1);
        total / count + u64::from(self.index < total % count)
    }

    /// normalized returns a share with count at least 1 and index below count (taken
    /// modulo count).
    fn normalized(self) -> ThreadShare {
        let count = self.count.max(1);
        ThreadShare { index: self.index % count, count }
    }
}

/// DrawError says that a draw could not give a VU its value: a `unique` rows variable
/// has no row `i + c*vu` for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct DrawError {
    /// variable is the name of the rows variable.
    pub variable: String,
    /// row is the row index the VU needed (None if it overflows u64).
    pub row: Option<u64>,
    /// rows is the number of rows the variable has.
    pub rows: usize,
}

impl fmt::Display for DrawError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let row = self.row.map_or_else(|| "a row past 2^64".to_string(), |r| format!("row {r}"));
        write!(
            f,
            "variable '{}' picks unique rows but has only {} rows and a virtual user needs {row}: \
             run fewer virtual users or give more rows",
            self.variable, self.rows
        )
    }
}

impl std::error::Error for DrawError {}

/// Variable is one compiled variable and the first of its slots.
#[derive(Clone, Debug)]
struct Variable {
    name: String,
    slot: usize,
    kind: Kind,
}

/// VariableSet is a validated list of variables, shared read-only by every thread;
/// per-thread mutable state lives in a [`VariableState`].
#[derive(Clone, Debug, Default)]
pub(crate) struct VariableSet {
    variables: Vec<Variable>,
    slot_names: Vec<String>,
}

/// Cursor is one variable's per-thread position.
#[derive(Clone, Debug)]
enum Cursor {
    None,
    Counter { next: i64, stride: i64 },
    Rows { next: usize, stride: usize },
    Pool { next: u64, zipf: Option<(usize, Zipf<f64>)> },
}

/// VariableState is one thread's mutable drawing state: its RNG, counter and
/// sequential cursors, and the count of draws from empty pools.
#[derive(Clone, Debug)]
pub(crate) struct VariableState {
    rng: SmallRng,
    share: ThreadShare,
    cursors: Vec<Cursor>,
    empty_pool_draws: u64,
}

impl VariableState {
    /// empty_pool_draws is how many draws of pool variables found their pool empty and
    /// yielded an empty value.
    #[cfg(test)]
    pub(crate) fn empty_pool_draws(&self) -> u64 {
        self.empty_pool_draws
    }
}

/// set replaces the content of `slot` with `bytes`, reusing its buffer.
fn set(slot: &mut Vec<u8>, bytes: &[u8]) {
    slot.clear();
    slot.extend_from_slice(bytes);
}

impl VariableSet {
    /// compile validates `specs` (fields reported as `{field_prefix}[i].key`) against the
    /// data `pools` and returns every error found, or the set ready to draw. Pools that
    /// captures fill must exist (see [`Pools::ensure`]) before compiling.
    pub(crate) fn compile(
        specs: &[VariableSpec],
        field_prefix: &str,
        pools: &Pools,
    ) -> Result<VariableSet, Vec<PlanError>> {
        let mut list = Vec::new();
        let mut set = VariableSet::default();
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (i, spec) in specs.iter().enumerate() {
            let mut errors = Errors { list: &mut list, field: format!("{field_prefix}[{i}]") };
            let name = spec.name();
            if !is_variable_name(name) {
                errors.add(
                    "name",
                    format!(
                        "invalid variable name '{name}': expected letters, digits and '_', not starting \
                         with a digit (no dots: a rows variable's columns are named name.column)"
                    ),
                );
            } else if let Some(first) = seen.insert(name, i) {
                errors.add("name", format!("duplicate variable name '{name}' (also {field_prefix}[{first}])"));
                seen.insert(name, first);
            }
            let Some(kind) = compile_kind(spec, pools, &mut errors) else {
                continue;
            };
            let slot = set.slot_names.len();
            match spec {
                VariableSpec::Rows { columns, .. } => {
                    set.slot_names.extend(columns.iter().map(|c| format!("{name}.{c}")));
                }
                _ => set.slot_names.push(name.to_string()),
            }
            set.variables.push(Variable { name: name.to_string(), slot, kind });
        }
        if list.is_empty() {
            Ok(set)
        } else {
            Err(list)
        }
    }

    /// slot_names lists the names templates may use, in slot order: slot `i` holds
    /// `slot_names()[i]`.
    pub(crate) fn slot_names(&self) -> Vec<String> {
        self.slot_names.clone()
    }

    /// slot_count is the number of slots the variables fill: `slot_names().len()`.
    #[cfg(test)]
    pub(crate) fn slot_count(&self) -> usize {
        self.slot_names.len()
    }

    /// slot_index returns the slot of `name` (`id`, `user.email`), or None.
    pub(crate) fn slot_index(&self, name: &str) -> Option<usize> {
        self.slot_names.iter().position(|n| n == name)
    }

    /// unique_rows_capacity is the fewest rows among `unique` rows variables (None if
    /// there is none): a run must keep `threads * (most VUs on one thread)` at or below it.
    pub(crate) fn unique_rows_capacity(&self) -> Option<usize> {
        self.variables
            .iter()
            .filter_map(|v| match v.kind {
                Kind::Rows { rows, pick: RowPick::Unique, .. } => Some(rows),
                _ => None,
            })
            .min()
    }

    /// thread_state returns the drawing state of thread `share`, with an RNG seeded from
    /// `seed` and the thread index (the same pair always draws the same sequence).
    pub(crate) fn thread_state(&self, share: ThreadShare, seed: u64) -> VariableState {
        let share = share.normalized();
        let (index, count) = (share.index, share.count);
        let cursors = self
            .variables
            .iter()
            .map(|v| match v.kind {
                Kind::Counter { start, step } => Cursor::Counter {
                    next: start.wrapping_add(step.wrapping_mul(index as i64)),
                    stride: step.wrapping_mul(count as i64),
                },
                Kind::Rows { rows, pick: RowPick::Sequential, .. } => {
                    Cursor::Rows { next: (index % rows as u64) as usize, stride: (count % rows as u64) as usize }
                }
                Kind::Pool { pick: PoolPick::Sequential | PoolPick::Zipf, .. } => {
                    Cursor::Pool { next: index, zipf: None }
                }
                _ => Cursor::None,
            })
            .collect();
        VariableState {
            rng: SmallRng::seed_from_u64(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
            share,
            cursors,
            empty_pool_draws: 0,
        }
    }

    /// draw fills every variable slot of `slots` for a new iteration of VU `vu` (the
    /// thread's own VU index). Slots missing from `slots` are skipped. It fills all slots
    /// even on error, then returns the first [`DrawError`] (a unique row past the end,
    /// whose slots are left empty). It allocates only when a slot buffer must grow.
    pub(crate) fn draw(
        &self,
        state: &mut VariableState,
        vu: u64,
        pools: &Pools,
        slots: &mut [Vec<u8>],
    ) -> Result<(), DrawError> {
        let mut result = Ok(());
        let VariableState { rng, share, cursors, empty_pool_draws } = state;
        for (var, cursor) in self.variables.iter().zip(cursors.iter_mut()) {
            let Some(slot) = slots.get_mut(var.slot) else {
                continue;
            };
            match &var.kind {
                Kind::Counter { .. } => {
                    if let Cursor::Counter { next, stride } = cursor {
                        set(slot, itoa::Buffer::new().format(*next).as_bytes());
                        *next = next.wrapping_add(*stride);
                    }
                }
                Kind::Uniform(dist) => set(slot, itoa::Buffer::new().format(dist.sample(rng)).as_bytes()),
                Kind::Zipf { dist, n } => {
                    let rank = (dist.sample(rng) as u64).clamp(1, *n);
                    set(slot, itoa::Buffer::new().format(rank).as_bytes());
                }
                Kind::Choice { values, weights } => {
                    let i = match weights {
                        Some(w) => w.sample(rng),
                        None => rng.random_range(0..values.len()),
                    };
                    set(slot, values.get(i).map_or(&[][..], |v| v));
                }
                Kind::Uuid => {
                    let id = uuid::Builder::from_random_bytes(rng.random()).into_uuid();
                    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
                    set(slot, id.hyphenated().encode_lower(&mut buf).as_bytes());
                }
                Kind::RandomString { length, alphabet, index } => {
                    slot.clear();
                    match alphabet {
                        Alphabet::Ascii(bytes) => {
                            slot.extend((0..*length).map(|_| bytes[index.sample(rng)]));
                        }
                        Alphabet::Chars(chars) => {
                            for _ in 0..*length {
                                let mut buf = [0u8; 4];
                                slot.extend_from_slice(chars[index.sample(rng)].encode_utf8(&mut buf).as_bytes());
                            }
                        }
                    }
                }
                Kind::Rows { table, columns, rows, pick } => {
                    let row = match (pick, cursor) {
                        (RowPick::Sequential, Cursor::Rows { next, stride }) => {
                            let row = *next;
                            *next = (*next + *stride) % *rows;
                            Some(row)
                        }
                        (RowPick::Unique, _) => {
                            let row = share.count.checked_mul(vu).and_then(|r| r.checked_add(share.index));
                            if let Some(r) = row.filter(|&r| r < *rows as u64) {
                                Some(r as usize)
                            } else {
                                if result.is_ok() {
                                    result = Err(DrawError { variable: var.name.clone(), row, rows: *rows });
                                }
                                None
                            }
                        }
                        _ => Some(rng.random_range(0..*rows)),
                    };
                    let start = row.map_or(0, |r| r * columns);
                    for column in 0..*columns {
                        let Some(slot) = slots.get_mut(var.slot + column) else {
                            break;
                        };
                        let cell = row.and_then(|_| table.get(start + column));
                        set(slot, cell.unwrap_or_default());
                    }
                }
                Kind::Pool { id, pick, s } => {
                    let len = pools.len(*id);
                    if len == 0 {
                        *empty_pool_draws += 1;
                        slot.clear();
                        continue;
                    }
                    let index = match (pick, cursor) {
                        (PoolPick::Sequential, Cursor::Pool { next, .. }) => {
                            let index = (*next % len as u64) as usize;
                            *next = next.wrapping_add(share.count);
                            index
                        }
                        (PoolPick::Zipf, Cursor::Pool { zipf, .. }) => {
                            if zipf.as_ref().is_none_or(|(n, _)| *n != len) {
                                *zipf = Zipf::new(len as f64, *s).ok().map(|d| (len, d));
                            }
                            match zipf {
                                Some((_, dist)) => (dist.sample(rng) as usize).clamp(1, len) - 1,
                                None => rng.random_range(0..len),
                            }
                        }
                        _ => rng.random_range(0..len),
                    };
                    set(slot, pools.get(*id, index));
                }
                Kind::Constant(value) => set(slot, value),
                Kind::Decimal { dist, decimals } => {
                    slot.clear();
                    // Writing into the slot's own buffer: no allocation once it has grown.
                    let _ = write!(slot, "{:.*}", *decimals, dist.sample(rng));
                }
                Kind::Vu => {
                    let number = share.index.wrapping_add(share.count.wrapping_mul(vu)).wrapping_add(1);
                    set(slot, itoa::Buffer::new().format(number).as_bytes());
                }
                Kind::Timestamp(unit) => {
                    let since = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
                    let value = match unit {
                        TimeUnit::S => u128::from(since.as_secs()),
                        TimeUnit::Ms => since.as_millis(),
                        TimeUnit::Us => since.as_micros(),
                    };
                    set(slot, itoa::Buffer::new().format(value).as_bytes());
                }
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::pool::PoolSpecs;
    use std::collections::BTreeSet;
    use std::fmt::Write as _;

    /// ok returns the value of a result that must be Ok, panicking with the error otherwise.
    pub(super) fn ok<T, E: fmt::Debug>(result: Result<T, E>, what: &str) -> T {
        match result {
            Ok(value) => value,
            Err(e) => panic!("{what}: {e:?}"),
        }
    }

    pub(super) fn specs(json: &str) -> Vec<VariableSpec> {
        ok(serde_json::from_str(json), json)
    }

    pub(super) fn pools() -> Pools {
        let mut initial = PoolSpecs::new();
        initial.insert("ids".into(), vec!["a".into(), "b".into(), "c".into()]);
        initial.insert("empty".into(), vec![]);
        Pools::new(&initial)
    }

    fn compile(json: &str) -> VariableSet {
        ok(VariableSet::compile(&specs(json), "vars", &pools()), json)
    }

    #[test]
    fn decimals_vu_numbers_and_timestamps() {
        let set = compile(
            r#"[{"name": "d", "type": "decimal", "min": 20, "max": 35, "decimals": 1},
                              {"name": "vu", "type": "vu"}, {"name": "t", "type": "timestamp"}]"#,
        );
        let mut numbers = std::collections::BTreeSet::new();
        for thread in 0..3 {
            let mut state = set.thread_state(ThreadShare { index: thread, count: 3 }, 7);
            for vu in 0..4 {
                let mut slots = vec![Vec::new(); set.slot_count()];
                let _ = set.draw(&mut state, vu, &pools(), &mut slots);
                let d = String::from_utf8_lossy(&slots[0]).to_string();
                let value: f64 = d.parse().unwrap_or(-1.0);
                assert!((20.0..=35.0).contains(&value) && d.split('.').nth(1).map(str::len) == Some(1), "{d}");
                numbers.insert(String::from_utf8_lossy(&slots[1]).parse::<u64>().unwrap_or(0));
                let t: u128 = String::from_utf8_lossy(&slots[2]).parse().unwrap_or(0);
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
                assert!(now.abs_diff(t) < 5_000, "{t} vs {now}");
            }
        }
        assert_eq!(numbers, (1..=12).collect(), "VU numbers are 1..=12 run-wide");
        let errors = VariableSet::compile(
            &specs(r#"[{"name": "d", "type": "decimal", "min": 5, "max": 1, "decimals": 12}]"#),
            "vars",
            &pools(),
        )
        .err()
        .unwrap_or_default();
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["vars[0].decimals", "vars[0].max"]);
    }

    /// draws returns `n` successive values of the only slot of the set's first variable.
    fn draws(set: &VariableSet, state: &mut VariableState, n: usize) -> Vec<String> {
        let mut slots = vec![Vec::new(); set.slot_count()];
        (0..n)
            .map(|_| {
                ok(set.draw(state, 0, &pools(), &mut slots), "draw");
                String::from_utf8_lossy(&slots[0]).into_owned()
            })
            .collect()
    }

    fn number(value: &str) -> i64 {
        ok(value.parse(), value)
    }

    #[test]
    fn counters_are_unique_and_dense_across_threads() {
        let cases = [(1, 1, 3), (100, -7, 3), (0, 2, 1), (5, 1, 4)];
        for (start, step, threads) in cases {
            let set = compile(&format!(r#"[{{"name": "c", "type": "counter", "start": {start}, "step": {step}}}]"#));
            let mut all = BTreeSet::new();
            for index in 0..threads {
                let mut state = set.thread_state(ThreadShare { index, count: threads }, 1);
                for value in draws(&set, &mut state, 1000) {
                    assert!(all.insert(number(&value)), "duplicate {value}");
                }
            }
            let want: BTreeSet<i64> = (0..1000 * threads as i64).map(|k| start + step * k).collect();
            assert_eq!(all, want, "start {start} step {step} threads {threads}");
        }
    }

    #[test]
    fn uniform_covers_its_range_and_nothing_else() {
        let cases = [(-3, 3), (7, 7), (0, 1), (i64::MIN, i64::MAX)];
        for (min, max) in cases {
            let set = compile(&format!(r#"[{{"name": "u", "type": "uniform", "min": {min}, "max": {max}}}]"#));
            let mut state = set.thread_state(ThreadShare::SINGLE, 7);
            let seen: BTreeSet<i64> = draws(&set, &mut state, 10_000).iter().map(|v| number(v)).collect();
            assert!(seen.iter().all(|v| (min..=max).contains(v)), "{min}..={max}: {seen:?}");
            if i128::from(max) - i128::from(min) < 100 {
                assert_eq!(seen, (min..=max).collect(), "{min}..={max}");
            }
        }
    }

    #[test]
    fn choice_follows_weights() {
        let set = compile(r#"[{"name": "c", "type": "choice", "values": ["a", "b", "c"], "weights": [70, 25, 5]}]"#);
        let mut state = set.thread_state(ThreadShare::SINGLE, 42);
        let n = 100_000;
        let values = draws(&set, &mut state, n);
        for (value, want) in [("a", 0.70), ("b", 0.25), ("c", 0.05)] {
            let share = values.iter().filter(|v| *v == value).count() as f64 / n as f64;
            assert!((share - want).abs() < 0.015, "{value}: {share} vs {want}");
        }
        let set = compile(r#"[{"name": "c", "type": "choice", "values": ["x", "y"]}]"#);
        let mut state = set.thread_state(ThreadShare::SINGLE, 42);
        let seen: BTreeSet<String> = draws(&set, &mut state, 1000).into_iter().collect();
        assert_eq!(seen, ["x", "y"].map(String::from).into());
    }

    #[test]
    fn zipf_matches_its_analytic_head_share() {
        let (n, s, head) = (10_000u64, 1.1f64, 2_000u64);
        let weight = |k: u64| (k as f64).powf(-s);
        let want = (1..=head).map(weight).sum::<f64>() / (1..=n).map(weight).sum::<f64>();
        let set = compile(&format!(r#"[{{"name": "z", "type": "zipf", "n": {n}, "s": {s}}}]"#));
        let mut state = set.thread_state(ThreadShare::SINGLE, 3);
        let draws = 100_000;
        let ranks: Vec<u64> = draws_u64(&set, &mut state, draws);
        assert!(ranks.iter().all(|k| (1..=n).contains(k)));
        let share = ranks.iter().filter(|&&k| k <= head).count() as f64 / draws as f64;
        assert!((share - want).abs() < 0.01, "head share {share} vs analytic {want}");
        for s in [0.5, 1.0, 3.0] {
            let set = compile(&format!(r#"[{{"name": "z", "type": "zipf", "n": 5, "s": {s}}}]"#));
            let mut state = set.thread_state(ThreadShare::SINGLE, 3);
            let seen: BTreeSet<u64> = draws_u64(&set, &mut state, 10_000).into_iter().collect();
            assert_eq!(seen, (1..=5).collect(), "s {s}");
        }
    }

    fn draws_u64(set: &VariableSet, state: &mut VariableState, n: usize) -> Vec<u64> {
        draws(set, state, n).iter().map(|v| number(v) as u64).collect()
    }

    #[test]
    fn uuids_are_well_formed_v4_and_distinct() {
        let set = compile(r#"[{"name": "id", "type": "uuid"}]"#);
        let mut state = set.thread_state(ThreadShare::SINGLE, 9);
        let values = draws(&set, &mut state, 10_000);
        for v in &values {
            let b = v.as_bytes();
            assert_eq!(b.len(), 36, "{v}");
            for (i, c) in b.iter().enumerate() {
                match i {
                    8 | 13 | 18 | 23 => assert_eq!(*c, b'-', "{v}"),
                    _ => assert!(c.is_ascii_digit() || (b'a'..=b'f').contains(c), "{v}"),
                }
            }
            assert_eq!(b[14], b'4', "{v}");
            assert!(b"89ab".contains(&b[19]), "{v}");
        }
        assert_eq!(values.iter().collect::<BTreeSet<_>>().len(), values.len());
    }

    #[test]
    fn random_strings_have_their_length_and_alphabet() {
        let cases: &[(&str, u32, &str)] = &[
            (r#""length": 16"#, 16, DEFAULT_ALPHABET),
            (r#""length": 1, "alphabet": "x""#, 1, "x"),
            (r#""length": 50, "alphabet": "ab01""#, 50, "ab01"),
            (r#""length": 20, "alphabet": "äö€""#, 20, "äö€"),
        ];
        for (fields, length, alphabet) in cases {
            let set = compile(&format!(r#"[{{"name": "s", "type": "random-string", {fields}}}]"#));
            let mut state = set.thread_state(ThreadShare::SINGLE, 5);
            let values = draws(&set, &mut state, 500);
            let mut seen = BTreeSet::new();
            for v in &values {
                assert_eq!(v.chars().count(), *length as usize, "{v}");
                assert!(v.chars().all(|c| alphabet.contains(c)), "{v}");
                seen.extend(v.chars());
            }
            assert_eq!(seen, alphabet.chars().collect(), "{fields}");
        }
    }

    fn rows_set(pick: &str, rows: usize) -> VariableSet {
        let rows: Vec<String> = (0..rows).map(|i| format!(r#"["{i}", "u{i}@x"]"#)).collect();
        compile(&format!(
            r#"[{{"name": "user", "type": "rows", "columns": ["id", "email"], "rows": [{}], "pick": "{pick}"}}]"#,
            rows.join(",")
        ))
    }

    #[test]
    fn sequential_rows_are_striped_over_threads() {
        let cases: &[(usize, u64, u64, &[&str])] = &[
            (5, 0, 1, &["0", "1", "2", "3", "4", "0", "1"]),
            (5, 0, 2, &["0", "2", "4", "1", "3", "0"]),
            (5, 1, 2, &["1", "3", "0", "2", "4", "1"]),
            (4, 1, 2, &["1", "3", "1", "3"]),
            (2, 4, 5, &["0", "1", "0"]),
        ];
        for (rows, index, count, want) in cases {
            let set = rows_set("sequential", *rows);
            let mut state = set.thread_state(ThreadShare { index: *index, count: *count }, 0);
            assert_eq!(draws(&set, &mut state, want.len()), *want, "{rows} rows, thread {index}/{count}");
        }
    }

    #[test]
    fn cells_draw_as_rows_do() {
        let cells = (0..7).fold(String::new(), |mut cells, i| {
            let _ = write!(cells, "{i}\\u0000{}\\u0000", if i % 2 == 0 { "" } else { "ü,\\n" });
            cells
        });
        let rows: Vec<String> =
            (0..7).map(|i| format!(r#"["{i}", "{}"]"#, if i % 2 == 0 { "" } else { "ü,\\n" })).collect();
        let head = r#"{"name": "user", "type": "rows", "columns": ["id", "email"], "pick": "sequential""#;
        let by_cells = compile(&format!(r#"[{head}, "cells": "{cells}"}}]"#));
        let by_rows = compile(&format!(r#"[{head}, "rows": [{}]}}]"#, rows.join(",")));
        let (mut a, mut b) = (vec![Vec::new(); 2], vec![Vec::new(); 2]);
        let (mut sa, mut sb) =
            (by_cells.thread_state(ThreadShare::SINGLE, 0), by_rows.thread_state(ThreadShare::SINGLE, 0));
        for i in 0..15 {
            ok(by_cells.draw(&mut sa, 0, &pools(), &mut a), "draw");
            ok(by_rows.draw(&mut sb, 0, &pools(), &mut b), "draw");
            assert_eq!(a, b, "draw {i}");
            assert_eq!(a[0], (i % 7).to_string().into_bytes());
        }
    }

    #[test]
    fn rows_fill_one_slot_per_column() {
        let set = rows_set("random", 10);
        let mut state = set.thread_state(ThreadShare::SINGLE, 0);
        let mut slots = vec![Vec::new(); 3];
        let mut seen = BTreeSet::new();
        for _ in 0..1000 {
            ok(set.draw(&mut state, 0, &pools(), &mut slots), "draw");
            let id = String::from_utf8_lossy(&slots[0]).into_owned();
            assert_eq!(slots[1], format!("u{id}@x").into_bytes());
            seen.insert(id);
        }
        assert_eq!(seen.len(), 10);
    }

    #[test]
    fn unique_rows_give_each_vu_its_own_row() {
        let set = rows_set("unique", 12);
        assert_eq!(set.unique_rows_capacity(), Some(12));
        assert_eq!(rows_set("random", 12).unique_rows_capacity(), None);
        let mut slots = vec![Vec::new(); 2];
        let mut all = BTreeSet::new();
        for index in 0..3 {
            let mut state = set.thread_state(ThreadShare { index, count: 3 }, 0);
            for vu in 0..4 {
                for _ in 0..3 {
                    ok(set.draw(&mut state, vu, &pools(), &mut slots), "draw");
                    assert_eq!(slots[0], (index + 3 * vu).to_string().into_bytes());
                }
                all.insert(slots[0].clone());
            }
            let err = set.draw(&mut state, 4, &pools(), &mut slots);
            let want = DrawError { variable: "user".into(), row: Some(index + 12), rows: 12 };
            assert_eq!(err, Err(want));
            assert!(slots[0].is_empty() && slots[1].is_empty());
            let err = set.draw(&mut state, u64::MAX, &pools(), &mut slots).err();
            assert_eq!(err.and_then(|e| e.row), None);
        }
        assert_eq!(all.len(), 12);
    }

    #[test]
    fn pool_picks() {
        let mut local = pools();
        let set = ok(
            VariableSet::compile(
                &specs(
                    r#"[{"name": "seq", "type": "pool", "pool": "ids", "pick": "sequential"},
                        {"name": "rnd", "type": "pool", "pool": "ids"},
                        {"name": "hot", "type": "pool", "pool": "ids", "pick": "zipf", "s": 2},
                        {"name": "none", "type": "pool", "pool": "empty"}]"#,
                ),
                "v",
                &local,
            ),
            "compile",
        );
        let ids = local.id("ids").unwrap_or(usize::MAX);
        let mut state = set.thread_state(ThreadShare { index: 1, count: 2 }, 11);
        let mut slots = vec![Vec::new(); 4];
        let mut got: [Vec<String>; 3] = Default::default();
        for i in 0..3000 {
            if i == 1000 {
                assert!(local.push(ids, b"d"));
            }
            ok(set.draw(&mut state, 0, &local, &mut slots), "draw");
            for (slot, values) in slots.iter().zip(got.iter_mut()) {
                values.push(String::from_utf8_lossy(slot).into_owned());
            }
            assert!(slots[3].is_empty());
        }
        assert_eq!(state.empty_pool_draws(), 3000);
        // sequential on thread 1 of 2: positions 1, 3, 5, … modulo the current length.
        assert_eq!(got[0][..4], ["b", "a", "c", "b"]);
        assert_eq!(got[0][1000..1004], ["b", "d", "b", "d"]);
        // random and zipf see the captured value once it is there.
        for values in &got[1..] {
            assert!(!values[..1000].contains(&"d".to_string()));
            assert!(values[1000..].contains(&"d".to_string()));
        }
        let hot = got[2].iter().filter(|v| *v == "a").count() as f64 / 3000.0;
        assert!(hot > 0.5, "zipf s=2 puts most draws on the first value: {hot}");
    }

    #[test]
    fn constant_and_same_seed_same_values() {
        let set = compile(r#"[{"name": "k", "type": "constant", "value": "v1"}]"#);
        let mut state = set.thread_state(ThreadShare::SINGLE, 0);
        assert_eq!(draws(&set, &mut state, 2), ["v1", "v1"]);

        let set = compile(r#"[{"name": "u", "type": "uniform", "min": 0, "max": 1000000}]"#);
        let run = |index, seed| draws(&set, &mut set.thread_state(ThreadShare { index, count: 2 }, seed), 20);
        assert_eq!(run(0, 1), run(0, 1));
        assert_ne!(run(0, 1), run(1, 1));
        assert_ne!(run(0, 1), run(0, 2));
    }

    #[test]
    fn short_slot_list_is_not_a_panic() {
        let set = rows_set("random", 3);
        let mut state = set.thread_state(ThreadShare { index: 9, count: 0 }, 0);
        let mut slots = vec![Vec::new(); 1];
        ok(set.draw(&mut state, 0, &pools(), &mut slots), "draw");
        assert!(!slots[0].is_empty());
        ok(set.draw(&mut state, 0, &pools(), &mut []), "no slots");
    }

    #[test]
    fn draw_reuses_slot_buffers() {
        let set = compile(
            r#"[{"name": "c", "type": "counter", "start": 1000000},
                {"name": "u", "type": "uniform", "min": 100, "max": 999},
                {"name": "z", "type": "zipf", "n": 9, "s": 1},
                {"name": "h", "type": "choice", "values": ["x", "yy"], "weights": [1, 1]},
                {"name": "id", "type": "uuid"},
                {"name": "s", "type": "random-string", "length": 64},
                {"name": "r", "type": "rows", "columns": ["a"], "rows": [["1"], ["22"]], "pick": "random"},
                {"name": "p", "type": "pool", "pool": "ids", "pick": "zipf"},
                {"name": "k", "type": "constant", "value": "v"}]"#,
        );
        let pools = pools();
        let mut state = set.thread_state(ThreadShare::SINGLE, 0);
        let mut slots = vec![Vec::new(); set.slot_count()];
        for _ in 0..100 {
            ok(set.draw(&mut state, 0, &pools, &mut slots), "warm-up");
        }
        let before: Vec<(*const u8, usize)> = slots.iter().map(|s| (s.as_ptr(), s.capacity())).collect();
        for _ in 0..10_000 {
            ok(set.draw(&mut state, 0, &pools, &mut slots), "draw");
        }
        let after: Vec<(*const u8, usize)> = slots.iter().map(|s| (s.as_ptr(), s.capacity())).collect();
        assert_eq!(before, after);
    }
}
