//! Variable specs as the plan JSON gives them, and their validation into the compiled
//! form that [`super::VariableSet`] draws from.

use rand::distr::weighted::WeightedIndex;
use rand::distr::Uniform;
use rand_distr::Zipf;
use serde::{Deserialize, Serialize};

use crate::spec::plan_error::PlanError;
use crate::spec::pool::Pools;

/// MAX_STRING_LENGTH is the longest random-string a variable may draw (1 MiB).
pub(super) const MAX_STRING_LENGTH: u32 = 1 << 20;

/// MAX_ZIPF_N is the largest zipf `n`: ranks are computed in f64, exact up to 2^53.
pub(super) const MAX_ZIPF_N: u64 = 1 << 53;

/// DEFAULT_ALPHABET is the alphabet of a random-string variable that names none.
pub(super) const DEFAULT_ALPHABET: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/// ROW_ERRORS_MAX is how many malformed rows of one variable are reported one by one.
const ROW_ERRORS_MAX: usize = 10;

/// VariableSpec is one variable as the plan JSON gives it: `name`, `type` and the type's
/// fields (see the [`crate::spec::variables`] doc for the shape and defaults).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case", deny_unknown_fields)]
pub enum VariableSpec {
    /// Counter yields `start + step*(i + c*k)` on thread `i` of `c`: unique run-wide.
    Counter {
        /// name is the variable's slot name.
        name: String,
        /// start is the first value (default 1).
        #[serde(default = "one")]
        start: i64,
        /// step is the difference between consecutive values run-wide (default 1, never 0).
        #[serde(default = "one")]
        step: i64,
    },
    /// Uniform yields an integer in `[min, max]`, both inclusive.
    Uniform {
        /// name is the variable's slot name.
        name: String,
        /// min is the smallest value drawn.
        min: i64,
        /// max is the largest value drawn (at least min).
        max: i64,
    },
    /// Zipf yields a rank `k` in `1..=n` with probability proportional to `1/k^s`.
    Zipf {
        /// name is the variable's slot name.
        name: String,
        /// n is the number of ranks (1 to 2^53).
        n: u64,
        /// s is the exponent (finite, above 0).
        s: f64,
    },
    /// Choice yields one of `values`, uniformly or weighted.
    Choice {
        /// name is the variable's slot name.
        name: String,
        /// values are the candidates (at least one).
        values: Vec<String>,
        /// weights, if given, has one non-negative weight per value, with a positive sum.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        weights: Option<Vec<f64>>,
    },
    /// Uuid yields a random version-4 UUID, lowercase and hyphenated.
    Uuid {
        /// name is the variable's slot name.
        name: String,
    },
    /// RandomString yields `length` characters drawn uniformly from `alphabet`.
    RandomString {
        /// name is the variable's slot name.
        name: String,
        /// length is the number of characters (1 to 1 MiB).
        length: u32,
        /// alphabet is the characters to draw from (default `[A-Za-z0-9]`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alphabet: Option<String>,
    },
    /// Rows yields one row of a table (CSV data parsed by Python), one slot per column.
    Rows {
        /// name is the prefix of the slot names `name.column`.
        name: String,
        /// columns names each cell of a row.
        columns: Vec<String>,
        /// rows are the data, each with one cell per column (empty when `cells` gives them).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        rows: Vec<Vec<String>>,
        /// cells, if given, is the table in one string instead of `rows`: every cell in row
        /// order, each followed by a NUL character (so no cell may hold one). A large table
        /// costs one string here instead of a list per row.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cells: Option<String>,
        /// pick says which row an iteration gets (default sequential).
        #[serde(default)]
        pick: RowPick,
    },
    /// Pool yields a value of a data pool over its current length.
    Pool {
        /// name is the variable's slot name.
        name: String,
        /// pool names the data pool.
        pool: String,
        /// pick says which value an iteration gets (default random).
        #[serde(default)]
        pick: PoolPick,
        /// s is the Zipf exponent for pick zipf (default 1.0; only allowed with zipf).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        s: Option<f64>,
    },
    /// Constant always yields `value`.
    Constant {
        /// name is the variable's slot name.
        name: String,
        /// value is the text yielded.
        value: String,
    },
    /// Decimal yields a number drawn uniformly from `[min, max]` with `decimals` digits
    /// after the point (e.g. a sensor reading).
    Decimal {
        /// name is the variable's slot name.
        name: String,
        /// min is the smallest value.
        min: f64,
        /// max is the largest value.
        max: f64,
        /// decimals is the number of digits after the point (default 2, at most 9).
        #[serde(default = "two")]
        decimals: u32,
    },
    /// Vu yields the VU's number, 1-based and unique run-wide within the scenario (k6's `__VU`).
    Vu {
        /// name is the variable's slot name.
        name: String,
    },
    /// Timestamp yields the wall-clock time when the iteration starts, since the Unix epoch.
    Timestamp {
        /// name is the variable's slot name.
        name: String,
        /// unit is `s`, `ms` (default) or `us`.
        #[serde(default)]
        unit: TimeUnit,
    },
}

/// TimeUnit is the unit of a timestamp variable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum TimeUnit {
    /// S: whole seconds.
    #[serde(rename = "s")]
    S,
    /// Ms: milliseconds.
    #[default]
    #[serde(rename = "ms")]
    Ms,
    /// Us: microseconds.
    #[serde(rename = "us")]
    Us,
}

fn two() -> u32 {
    2
}

fn one() -> i64 {
    1
}

impl VariableSpec {
    /// name returns the variable's name.
    pub fn name(&self) -> &str {
        match self {
            VariableSpec::Counter { name, .. }
            | VariableSpec::Uniform { name, .. }
            | VariableSpec::Zipf { name, .. }
            | VariableSpec::Choice { name, .. }
            | VariableSpec::Uuid { name }
            | VariableSpec::RandomString { name, .. }
            | VariableSpec::Rows { name, .. }
            | VariableSpec::Pool { name, .. }
            | VariableSpec::Constant { name, .. }
            | VariableSpec::Decimal { name, .. }
            | VariableSpec::Vu { name }
            | VariableSpec::Timestamp { name, .. } => name,
        }
    }
}

/// RowPick says which row of a rows variable an iteration gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowPick {
    /// Sequential stripes the rows over threads: thread `i` of `c` takes `i, i+c, …`.
    #[default]
    Sequential,
    /// Random draws a uniform row.
    Random,
    /// Unique gives VU `vu` of thread `i` row `i + c*vu`, always the same one.
    Unique,
}

/// PoolPick says which value of a data pool an iteration gets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PoolPick {
    /// Sequential stripes the indices over threads: thread `i` of `c` takes `i, i+c, …`.
    Sequential,
    /// Random draws a uniform index.
    #[default]
    Random,
    /// Zipf draws index `Zipf(len, s) - 1`: the first values are the hot ones.
    Zipf,
}

/// Alphabet is the characters a random-string variable draws from.
#[derive(Clone, Debug)]
pub(super) enum Alphabet {
    Ascii(Box<[u8]>),
    Chars(Box<[char]>),
}

/// Kind is a validated variable, ready to draw.
#[derive(Clone, Debug)]
pub(super) enum Kind {
    Counter { start: i64, step: i64 },
    Uniform(Uniform<i64>),
    Zipf { dist: Zipf<f64>, n: u64 },
    Choice { values: Box<[Box<[u8]>]>, weights: Option<WeightedIndex<f64>> },
    Uuid,
    RandomString { length: usize, alphabet: Alphabet, index: Uniform<usize> },
    Rows { table: Table, columns: usize, rows: usize, pick: RowPick },
    Pool { id: usize, pick: PoolPick, s: f64 },
    Constant(Box<[u8]>),
    Decimal { dist: Uniform<f64>, decimals: usize },
    Vu,
    Timestamp(TimeUnit),
}

/// Table is the cells of a rows variable in one buffer: cell `i` is `data[start..ends[i]]`,
/// where `start` is one past the previous cell's end (0 for the first); one allocation for
/// the bytes and four bytes a cell, however many rows, shared by every thread.
#[derive(Clone, Debug)]
pub(super) struct Table {
    data: Box<[u8]>,
    ends: Box<[u32]>,
}

impl Table {
    /// MAX_BYTES is the most a table may hold (its offsets are 32-bit).
    const MAX_BYTES: usize = u32::MAX as usize;

    /// from_cells copies `cells` into one buffer, each cell followed by a separator byte;
    /// None when they pass MAX_BYTES.
    fn from_cells<'a>(cells: impl IntoIterator<Item = &'a str>) -> Option<Table> {
        let mut data = Vec::new();
        let mut ends = Vec::new();
        for cell in cells {
            data.extend_from_slice(cell.as_bytes());
            ends.push(u32::try_from(data.len()).ok()?);
            data.push(0);
        }
        (data.len() <= Self::MAX_BYTES).then(|| Table { data: data.into(), ends: ends.into() })
    }

    /// from_separated takes `text` whose cells each end with a NUL (the `cells` form):
    /// None when it passes MAX_BYTES or does not end with a NUL.
    fn from_separated(text: &str) -> Option<Table> {
        if text.len() > Self::MAX_BYTES || !(text.is_empty() || text.ends_with('\0')) {
            return None;
        }
        let ends = text.bytes().enumerate().filter(|&(_, b)| b == 0).map(|(i, _)| i as u32).collect();
        Some(Table { data: text.as_bytes().into(), ends })
    }

    /// len is the number of cells.
    pub(super) fn len(&self) -> usize {
        self.ends.len()
    }

    /// get is cell `i`, or None past the last.
    pub(super) fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)? as usize;
        let start = match i.checked_sub(1) {
            Some(before) => self.ends[before] as usize + 1,
            None => 0,
        };
        self.data.get(start..end)
    }
}

/// is_word reports whether `s` is non-empty ASCII letters, digits and `_`.
fn is_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// is_variable_name reports whether `s` matches `[A-Za-z_][A-Za-z0-9_]*`.
pub(super) fn is_variable_name(s: &str) -> bool {
    is_word(s) && !s.as_bytes()[0].is_ascii_digit()
}

/// bytes_list copies strings into boxed byte strings.
fn bytes_list<'a>(values: impl IntoIterator<Item = &'a String>) -> Box<[Box<[u8]>]> {
    values.into_iter().map(|v| Box::from(v.as_bytes())).collect()
}

/// Errors collects the PlanErrors of one variable under its field path.
pub(super) struct Errors<'a> {
    pub(super) list: &'a mut Vec<PlanError>,
    pub(super) field: String,
}

impl Errors<'_> {
    pub(super) fn add(&mut self, key: &str, message: impl Into<String>) {
        self.list.push(PlanError::new(format!("{}.{key}", self.field), message));
    }
}

/// compile_kind validates one spec and returns its compiled kind, or None after adding
/// its errors.
pub(super) fn compile_kind(spec: &VariableSpec, pools: &Pools, errors: &mut Errors<'_>) -> Option<Kind> {
    let before = errors.list.len();
    let kind = match spec {
        VariableSpec::Counter { start, step, .. } => {
            if *step == 0 {
                errors.add("step", "must not be 0 (a counter yields unique values; use a constant for a fixed one)");
            }
            Kind::Counter { start: *start, step: *step }
        }
        VariableSpec::Uniform { min, max, .. } => {
            if let Ok(dist) = Uniform::new_inclusive(*min, *max) {
                Kind::Uniform(dist)
            } else {
                errors.add("max", format!("must be at least min ({min}), got {max}"));
                return None;
            }
        }
        VariableSpec::Zipf { n, s, .. } => {
            if *n == 0 || *n > MAX_ZIPF_N {
                errors.add("n", format!("must be between 1 and {MAX_ZIPF_N} ranks, got {n}"));
            }
            if !(s.is_finite() && *s > 0.0) {
                errors.add("s", format!("must be a positive number, got {s}"));
            }
            match Zipf::new(*n as f64, *s) {
                Ok(dist) => Kind::Zipf { dist, n: *n },
                Err(_) => return None,
            }
        }
        VariableSpec::Choice { values, weights, .. } => {
            if values.is_empty() {
                errors.add("values", "must list at least one value");
                return None;
            }
            let weights = match weights {
                None => None,
                Some(weights) => compile_weights(values.len(), weights, errors),
            };
            Kind::Choice { values: bytes_list(values), weights }
        }
        VariableSpec::Uuid { .. } => Kind::Uuid,
        VariableSpec::RandomString { length, alphabet, .. } => {
            if *length == 0 || *length > MAX_STRING_LENGTH {
                errors.add("length", format!("must be between 1 and {MAX_STRING_LENGTH} characters, got {length}"));
            }
            let alphabet = alphabet.as_deref().unwrap_or(DEFAULT_ALPHABET);
            let chars: Box<[char]> = alphabet.chars().collect();
            let Ok(index) = Uniform::new(0, chars.len()) else {
                errors.add("alphabet", "must have at least one character");
                return None;
            };
            let alphabet =
                if alphabet.is_ascii() { Alphabet::Ascii(alphabet.as_bytes().into()) } else { Alphabet::Chars(chars) };
            Kind::RandomString { length: *length as usize, alphabet, index }
        }
        VariableSpec::Rows { columns, rows, cells, pick, .. } => {
            compile_rows(columns, rows, cells.as_deref(), *pick, errors)?
        }
        VariableSpec::Pool { pool, pick, s, .. } => {
            let id = pools.id(pool);
            if id.is_none() {
                let known = if pools.names().is_empty() {
                    "no pools are defined".to_string()
                } else {
                    format!("pools: {}", pools.names().join(", "))
                };
                errors.add("pool", format!("unknown pool '{pool}' ({known})"));
            }
            let s = match (pick, s) {
                (PoolPick::Zipf, s) => s.unwrap_or(1.0),
                (_, None) => 1.0,
                (_, Some(_)) => {
                    errors.add("s", "is only used with \"pick\": \"zipf\"");
                    1.0
                }
            };
            if !(s.is_finite() && s > 0.0) {
                errors.add("s", format!("must be a positive number, got {s}"));
            }
            Kind::Pool { id: id?, pick: *pick, s }
        }
        VariableSpec::Constant { value, .. } => Kind::Constant(value.as_bytes().into()),
        VariableSpec::Decimal { min, max, decimals, .. } => {
            if *decimals > 9 {
                errors.add("decimals", format!("must be from 0 to 9, got {decimals}"));
            }
            if !(min.is_finite() && max.is_finite()) {
                errors.add("min", "min and max must be finite numbers");
                return None;
            }
            if let Ok(dist) = Uniform::new_inclusive(*min, *max) {
                Kind::Decimal { dist, decimals: (*decimals).min(9) as usize }
            } else {
                errors.add("max", format!("must be at least min ({min}), got {max}"));
                return None;
            }
        }
        VariableSpec::Vu { .. } => Kind::Vu,
        VariableSpec::Timestamp { unit, .. } => Kind::Timestamp(*unit),
    };
    (errors.list.len() == before).then_some(kind)
}

/// compile_weights validates a choice's weights and builds their sampler.
fn compile_weights(values: usize, weights: &[f64], errors: &mut Errors<'_>) -> Option<WeightedIndex<f64>> {
    if weights.len() != values {
        errors.add("weights", format!("has {} weights for {values} values: give one weight per value", weights.len()));
        return None;
    }
    let mut valid = true;
    for (i, w) in weights.iter().enumerate() {
        if !(w.is_finite() && *w >= 0.0) {
            errors.add(&format!("weights[{i}]"), format!("must be zero or a positive number, got {w}"));
            valid = false;
        }
    }
    if !valid {
        return None;
    }
    match WeightedIndex::new(weights) {
        Ok(index) => Some(index),
        Err(e) => {
            errors.add("weights", format!("must have a positive sum ({e})"));
            None
        }
    }
}

/// compile_rows validates a rows variable's table (given as `rows`, or as `cells` when that
/// is set) and flattens its cells into one [`Table`].
fn compile_rows(
    columns: &[String],
    rows: &[Vec<String>],
    cells: Option<&str>,
    pick: RowPick,
    errors: &mut Errors<'_>,
) -> Option<Kind> {
    let before = errors.list.len();
    if columns.is_empty() {
        errors.add("columns", "must name at least one column");
    }
    for (i, column) in columns.iter().enumerate() {
        if !is_word(column) {
            errors.add(
                &format!("columns[{i}]"),
                format!("invalid column name '{column}': expected letters, digits and '_'"),
            );
        } else if columns[..i].contains(column) {
            errors.add(&format!("columns[{i}]"), format!("duplicate column '{column}'"));
        }
    }
    let table = if let Some(text) = cells {
        if !rows.is_empty() {
            errors.add("cells", "cannot be given beside rows (give the table one way)");
        }
        let table = Table::from_separated(text);
        if table.is_none() {
            errors.add("cells", "must be at most 4 GiB, each cell followed by a NUL character");
        }
        table
    } else {
        let bad: Vec<usize> =
            rows.iter().enumerate().filter(|(_, r)| r.len() != columns.len()).map(|(i, _)| i).collect();
        for &i in bad.iter().take(ROW_ERRORS_MAX) {
            errors.add(
                &format!("rows[{i}]"),
                format!(
                    "has {} cells, expected {} (one per column: {})",
                    rows[i].len(),
                    columns.len(),
                    columns.join(", ")
                ),
            );
        }
        if bad.len() > ROW_ERRORS_MAX {
            errors.add("rows", format!("{} more rows have the wrong number of cells", bad.len() - ROW_ERRORS_MAX));
        }
        let table = Table::from_cells(rows.iter().flatten().map(String::as_str));
        if table.is_none() {
            errors.add("rows", "must hold at most 4 GiB");
        }
        table
    };
    let table = table?;
    let count = table.len().checked_div(columns.len()).unwrap_or(0);
    if count == 0 {
        errors.add("rows", "must have at least one row");
    } else if cells.is_some() && count * columns.len() != table.len() {
        errors.add(
            "cells",
            format!("holds {} cells, not a whole number of rows of {} columns", table.len(), columns.len()),
        );
    }
    if errors.list.len() != before {
        return None;
    }
    Some(Kind::Rows { table, columns: columns.len(), rows: count, pick })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ok, pools, specs};
    use super::super::VariableSet;
    use super::*;

    #[test]
    fn every_kind_parses_and_round_trips() {
        let json = r#"[
            {"name": "seq", "type": "counter"},
            {"name": "seq2", "type": "counter", "start": -5, "step": 3},
            {"name": "n", "type": "uniform", "min": 1, "max": 100},
            {"name": "rank", "type": "zipf", "n": 10000, "s": 1.1},
            {"name": "verb", "type": "choice", "values": ["a", "b"], "weights": [3, 1]},
            {"name": "rid", "type": "uuid"},
            {"name": "tag", "type": "random-string", "length": 12},
            {"name": "user", "type": "rows", "columns": ["id", "email"], "rows": [["1", "a@x"]], "pick": "unique"},
            {"name": "task", "type": "pool", "pool": "ids", "pick": "zipf", "s": 1.2},
            {"name": "token", "type": "constant", "value": "abc"}
        ]"#;
        let parsed = specs(json);
        assert_eq!(parsed[0], VariableSpec::Counter { name: "seq".into(), start: 1, step: 1 });
        assert_eq!(
            parsed[7],
            VariableSpec::Rows {
                name: "user".into(),
                columns: vec!["id".into(), "email".into()],
                rows: vec![vec!["1".into(), "a@x".into()]],
                cells: None,
                pick: RowPick::Unique
            }
        );
        let names: Vec<&str> = parsed.iter().map(VariableSpec::name).collect();
        assert_eq!(names, ["seq", "seq2", "n", "rank", "verb", "rid", "tag", "user", "task", "token"]);
        let again: Vec<VariableSpec> = ok(serde_json::from_str(&ok(serde_json::to_string(&parsed), "ser")), "de");
        assert_eq!(again, parsed);
        let set = ok(VariableSet::compile(&parsed, "vars", &pools()), "compile");
        let want = ["seq", "seq2", "n", "rank", "verb", "rid", "tag", "user.id", "user.email", "task", "token"];
        assert_eq!(set.slot_names(), want);
        assert_eq!((set.slot_index("user.email"), set.slot_index("user")), (Some(8), None));
    }

    #[test]
    fn defaults() {
        let parsed = specs(
            r#"[{"name": "r", "type": "rows", "columns": ["a"], "rows": [["1"]]},
                {"name": "p", "type": "pool", "pool": "ids"}]"#,
        );
        assert!(matches!(parsed[0], VariableSpec::Rows { pick: RowPick::Sequential, .. }));
        assert!(matches!(parsed[1], VariableSpec::Pool { pick: PoolPick::Random, s: None, .. }));
    }

    #[test]
    fn bad_json_is_rejected() {
        let cases = [
            (r#"[{"name": "x", "type": "counter", "bogus": 1}]"#, "bogus"),
            (r#"[{"name": "x", "type": "gaussian"}]"#, "gaussian"),
            (r#"[{"name": "x", "type": "rows", "columns": ["a"], "rows": [], "pick": "first"}]"#, "first"),
            (r#"[{"name": "x", "type": "pool", "pool": "ids", "pick": "unique"}]"#, "unique"),
            (r#"[{"type": "uuid"}]"#, "name"),
            (r#"[{"name": "x", "type": "uniform", "min": 1}]"#, "max"),
        ];
        for (json, want) in cases {
            match serde_json::from_str::<Vec<VariableSpec>>(json) {
                Ok(v) => panic!("{json}: parsed as {v:?}"),
                Err(e) => assert!(e.to_string().contains(want), "{json}: {e}"),
            }
        }
    }

    #[test]
    fn compile_reports_every_error_with_its_field() {
        let cases: &[(&str, &[(&str, &str)])] = &[
            (r#"{"name": "9x", "type": "uuid"}"#, &[("v[0].name", "invalid variable name '9x'")]),
            (r#"{"name": "a.b", "type": "uuid"}"#, &[("v[0].name", "no dots")]),
            (r#"{"name": "c", "type": "counter", "step": 0}"#, &[("v[0].step", "must not be 0")]),
            (r#"{"name": "u", "type": "uniform", "min": 5, "max": 3}"#, &[("v[0].max", "at least min (5), got 3")]),
            (r#"{"name": "z", "type": "zipf", "n": 0, "s": 0}"#, &[("v[0].n", "got 0"), ("v[0].s", "positive")]),
            (r#"{"name": "z", "type": "zipf", "n": 9007199254740993, "s": 1}"#, &[("v[0].n", "between 1 and")]),
            (r#"{"name": "z", "type": "zipf", "n": 5, "s": -1.5}"#, &[("v[0].s", "got -1.5")]),
            (r#"{"name": "c", "type": "choice", "values": []}"#, &[("v[0].values", "at least one")]),
            (
                r#"{"name": "c", "type": "choice", "values": ["a", "b"], "weights": [1]}"#,
                &[("v[0].weights", "has 1 weights for 2 values")],
            ),
            (
                r#"{"name": "c", "type": "choice", "values": ["a", "b"], "weights": [1, -2]}"#,
                &[("v[0].weights[1]", "got -2")],
            ),
            (
                r#"{"name": "c", "type": "choice", "values": ["a"], "weights": [0]}"#,
                &[("v[0].weights", "positive sum")],
            ),
            (r#"{"name": "s", "type": "random-string", "length": 0}"#, &[("v[0].length", "got 0")]),
            (r#"{"name": "s", "type": "random-string", "length": 1048577}"#, &[("v[0].length", "1048576")]),
            (
                r#"{"name": "s", "type": "random-string", "length": 3, "alphabet": ""}"#,
                &[("v[0].alphabet", "at least one")],
            ),
            (
                r#"{"name": "r", "type": "rows", "columns": [], "rows": []}"#,
                &[("v[0].columns", "at least one"), ("v[0].rows", "at least one row")],
            ),
            (
                r#"{"name": "r", "type": "rows", "columns": ["a", "a", "b-c"], "rows": [["1", "2", "3"]]}"#,
                &[("v[0].columns[1]", "duplicate column 'a'"), ("v[0].columns[2]", "invalid column name 'b-c'")],
            ),
            (
                r#"{"name": "r", "type": "rows", "columns": ["id", "email"], "rows": [["1", "x"], ["2"], ["3", "y", "z"]]}"#,
                &[
                    ("v[0].rows[1]", "has 1 cells, expected 2 (one per column: id, email)"),
                    ("v[0].rows[2]", "has 3 cells"),
                ],
            ),
            (
                r#"{"name": "r", "type": "rows", "columns": ["a", "b"], "cells": "1\u00002\u00003\u0000"}"#,
                &[("v[0].cells", "holds 3 cells, not a whole number of rows of 2 columns")],
            ),
            (r#"{"name": "r", "type": "rows", "columns": ["a"], "cells": "1\u00002"}"#, &[("v[0].cells", "NUL")]),
            (r#"{"name": "r", "type": "rows", "columns": ["a"], "cells": ""}"#, &[("v[0].rows", "at least one row")]),
            (
                r#"{"name": "r", "type": "rows", "columns": ["a"], "rows": [["1"]], "cells": "1\u0000"}"#,
                &[("v[0].cells", "beside rows")],
            ),
            (
                r#"{"name": "p", "type": "pool", "pool": "nope"}"#,
                &[("v[0].pool", "unknown pool 'nope' (pools: empty, ids)")],
            ),
            (r#"{"name": "p", "type": "pool", "pool": "ids", "s": 2}"#, &[("v[0].s", "only used with")]),
            (r#"{"name": "p", "type": "pool", "pool": "ids", "pick": "zipf", "s": 0}"#, &[("v[0].s", "positive")]),
        ];
        for (json, wants) in cases {
            let parsed = specs(&format!("[{json}]"));
            let Err(errors) = VariableSet::compile(&parsed, "v", &pools()) else { panic!("{json}: compiled") };
            assert_eq!(errors.len(), wants.len(), "{json}: {errors:?}");
            for (field, message) in *wants {
                assert!(
                    errors.iter().any(|e| e.field == *field && e.message.contains(message)),
                    "{json}: no {field}: {message} in {errors:?}"
                );
            }
        }
    }

    #[test]
    fn compile_collects_errors_across_variables() {
        let json = r#"[{"name": "a", "type": "uuid"}, {"name": "a", "type": "uniform", "min": 2, "max": 1},
                       {"name": "b", "type": "pool", "pool": "x"}]"#;
        let errors =
            VariableSet::compile(&specs(json), "scenarios[0].variables", &Pools::default()).err().unwrap_or_default();
        let got: Vec<(&str, &str)> = errors.iter().map(|e| (e.field.as_str(), e.message.as_str())).collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(
            got[0],
            ("scenarios[0].variables[1].name", "duplicate variable name 'a' (also scenarios[0].variables[0])")
        );
        assert_eq!(got[1].0, "scenarios[0].variables[1].max");
        assert_eq!(got[2], ("scenarios[0].variables[2].pool", "unknown pool 'x' (no pools are defined)"));
    }

    #[test]
    fn too_many_bad_rows_are_summarized() {
        let rows: Vec<Vec<String>> = (0..25).map(|_| vec!["x".to_string()]).collect();
        let spec = VariableSpec::Rows {
            name: "r".into(),
            columns: vec!["a".into(), "b".into()],
            rows,
            cells: None,
            pick: RowPick::Random,
        };
        let errors = VariableSet::compile(&[spec], "v", &pools()).err().unwrap_or_default();
        assert_eq!(errors.len(), ROW_ERRORS_MAX + 1, "{errors:?}");
        assert_eq!(errors[ROW_ERRORS_MAX].message, "15 more rows have the wrong number of cells");
    }
}
