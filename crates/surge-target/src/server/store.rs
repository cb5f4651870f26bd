//! The Task API's in-memory store, split into independently locked shards.
//!
//! Each stored task carries the number of times it was read by id (`GET /tasks/{id}`), a
//! plain integer beside the task in its shard: the read takes the shard's lock anyway, so
//! counting it costs one add and no extra synchronization.
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::{Map, Value};

/// Task is one stored task: its id and its JSON text (an object that includes `"id"`),
/// serialized once when written so reads copy no structure.
pub type Task = Arc<str>;

/// TaskStore keeps tasks in `shards` hash maps, task `id` in shard `id % shards`; ids are
/// handed out in increasing order from 1 and never reused. With a lock hold
/// ([`TaskStore::with_hold`], `--lock-hold`) each operation also holds its shard's lock for a
/// known time ([`TaskStore::lock_until`]).
#[derive(Debug)]
pub struct TaskStore {
    shards: Box<[Mutex<HashMap<u64, Entry>>]>,
    next_id: AtomicU64,
    hold_ns: u64,
    /// held_until is, per shard, when its lock's last reserved critical section ends.
    held_until: Box<[Mutex<u64>]>,
}

/// Touch is what one store operation locks: the shard of one task id, or every shard in turn
/// (a listing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Touch {
    /// One is the shard of this task id (create, read, update, delete; found or not).
    One(u64),
    /// All is every shard, one after the other (`GET /tasks`).
    All,
}

/// Entry is one stored task and how many times [`TaskStore::read`] returned it since it was
/// created or the reads were last reset.
#[derive(Debug)]
struct Entry {
    task: Task,
    reads: u64,
}

/// Reads is a snapshot of per-task read counts: `(id, reads)` in id order, tasks never read
/// left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reads {
    /// by_id is `(id, reads)` for every stored task with at least one read, lowest id first.
    pub by_id: Vec<(u64, u64)>,
    /// total is the sum of the reads in `by_id`.
    pub total: u64,
}

/// Page is one page of [`TaskStore::list`]: tasks in id order and how many exist in all.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// tasks are the page's tasks, lowest id first.
    pub tasks: Vec<Task>,
    /// total is the number of tasks in the store.
    pub total: usize,
}

impl TaskStore {
    /// new returns an empty store with `shards` shards (at least 1).
    pub fn new(shards: usize) -> Self {
        Self::with_hold(shards, 0)
    }

    /// with_hold returns an empty store with `shards` shards (at least 1) whose every
    /// operation holds its shard's lock for `hold_ns` (a listing holds each of the n shards
    /// for `hold_ns / n`, the share of the store under it); 0 is no modeled hold.
    pub fn with_hold(shards: usize, hold_ns: u64) -> Self {
        let count = shards.max(1);
        Self {
            shards: (0..count).map(|_| Mutex::new(HashMap::new())).collect(),
            next_id: AtomicU64::new(1),
            hold_ns,
            held_until: (0..count).map(|_| Mutex::new(0)).collect(),
        }
    }

    fn index(&self, id: u64) -> usize {
        (id % self.shards.len() as u64) as usize
    }

    fn shard(&self, id: u64) -> MutexGuard<'_, HashMap<u64, Entry>> {
        self.shards[self.index(id)].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// holds says whether operations hold their locks for a modeled time.
    pub fn holds(&self) -> bool {
        self.hold_ns > 0
    }

    /// lock_until reserves the critical sections of an operation arriving at `now_ns` that
    /// locks `touch` and returns when the last of them ends: each lock serves its operations
    /// one at a time, in arrival order, for the hold each (a FIFO single server per shard,
    /// computed like the service slots, so timer lateness never loses lock capacity). Without
    /// a hold it is `now_ns`. One lock therefore completes at most 1 / hold operations per
    /// second; n shards, with ids spread evenly, n / hold.
    pub fn lock_until(&self, touch: Touch, now_ns: u64) -> u64 {
        if self.hold_ns == 0 {
            return now_ns;
        }
        match touch {
            Touch::One(id) => self.reserve(self.index(id), now_ns, self.hold_ns),
            Touch::All => {
                let share = (self.hold_ns / self.shards.len() as u64).max(1);
                (0..self.shards.len()).fold(now_ns, |at, index| self.reserve(index, at, share))
            }
        }
    }

    /// reserve books shard `index`'s lock for `hold_ns` from `at_ns` or when it frees, if later,
    /// and returns when that critical section ends.
    fn reserve(&self, index: usize, at_ns: u64, hold_ns: u64) -> u64 {
        let mut until = self.held_until[index].lock().unwrap_or_else(PoisonError::into_inner);
        *until = (*until).max(at_ns).saturating_add(hold_ns);
        *until
    }

    /// capacity is the most operations per second the locks complete when ids spread evenly
    /// over the shards (shards / hold; 1 / hold with one shard, whatever the ids); `None`
    /// without a hold.
    pub fn capacity(&self) -> Option<f64> {
        (self.hold_ns > 0).then(|| self.shards.len() as f64 * 1e9 / self.hold_ns as f64)
    }

    /// create stores `fields` (any `"id"` in it is replaced) under a new id and returns the task.
    pub fn create(&self, fields: Map<String, Value>) -> (u64, Task) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let task = render(id, fields);
        self.shard(id).insert(id, Entry { task: Arc::clone(&task), reads: 0 });
        (id, task)
    }

    /// get returns task `id`, if it exists, without counting a read.
    pub fn get(&self, id: u64) -> Option<Task> {
        self.shard(id).get(&id).map(|e| Arc::clone(&e.task))
    }

    /// read returns task `id`, if it exists, and counts one read of it (see [`TaskStore::reads`]).
    pub fn read(&self, id: u64) -> Option<Task> {
        let mut shard = self.shard(id);
        let entry = shard.get_mut(&id)?;
        entry.reads = entry.reads.wrapping_add(1);
        Some(Arc::clone(&entry.task))
    }

    /// reads is the read count of every stored task read at least once, in id order. Each
    /// shard is read under its lock; the shards are not one instant. A deleted task's reads
    /// are gone with it.
    pub fn reads(&self) -> Reads {
        let mut by_id: Vec<(u64, u64)> = Vec::new();
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            by_id.extend(shard.iter().filter(|(_, e)| e.reads > 0).map(|(&id, e)| (id, e.reads)));
        }
        by_id.sort_unstable();
        let total = by_id.iter().map(|&(_, n)| n).sum();
        Reads { by_id, total }
    }

    /// reset_reads sets every task's read count to zero.
    pub fn reset_reads(&self) {
        for shard in &self.shards {
            for entry in shard.lock().unwrap_or_else(PoisonError::into_inner).values_mut() {
                entry.reads = 0;
            }
        }
    }

    /// update replaces task `id`'s fields, keeping its id; `None` if it does not exist.
    pub fn update(&self, id: u64, fields: Map<String, Value>) -> Option<Task> {
        let mut shard = self.shard(id);
        let entry = shard.get_mut(&id)?;
        entry.task = render(id, fields);
        Some(Arc::clone(&entry.task))
    }

    /// delete removes task `id`, saying whether it existed.
    pub fn delete(&self, id: u64) -> bool {
        self.shard(id).remove(&id).is_some()
    }

    /// list returns up to `limit` tasks in id order, skipping the first `offset`.
    pub fn list(&self, offset: usize, limit: usize) -> Page {
        let mut ids: Vec<u64> = Vec::new();
        for shard in &self.shards {
            ids.extend(shard.lock().unwrap_or_else(PoisonError::into_inner).keys());
        }
        ids.sort_unstable();
        let total = ids.len();
        let tasks = ids
            .iter()
            .skip(offset)
            .take(limit)
            .filter_map(|&id| self.get(id)) // one deleted meanwhile is skipped
            .collect();
        Page { tasks, total }
    }

    /// len is the number of tasks stored.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).len()).sum()
    }

    /// is_empty says whether no task is stored.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// render writes a task's JSON: its fields with `"id"` set to `id` (keys in sorted order).
fn render(id: u64, mut fields: Map<String, Value>) -> Task {
    fields.insert("id".into(), Value::from(id));
    Value::Object(fields).to_string().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap_or_default()
    }

    #[test]
    fn crud_round_trip() {
        let store = TaskStore::new(4);
        let (a, task) = store.create(fields(r#"{"title": "a", "id": 99}"#));
        assert_eq!(a, 1);
        assert_eq!(&*task, r#"{"id":1,"title":"a"}"#);
        let (b, _) = store.create(fields(r#"{"title": "b"}"#));
        assert_eq!(store.get(b).as_deref(), Some(r#"{"id":2,"title":"b"}"#));
        assert_eq!(store.update(a, fields(r#"{"done": true}"#)).as_deref(), Some(r#"{"done":true,"id":1}"#));
        assert_eq!(store.update(77, fields("{}")), None);
        assert!(store.delete(a));
        assert!(!store.delete(a));
        assert_eq!(store.get(a), None);
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn each_lock_serves_one_critical_section_at_a_time() {
        let us = 1_000u64;
        // (shards, operations arriving at 0, when the last one ends)
        let cases: &[(usize, &[Touch], u64)] = &[
            (1, &[Touch::One(1), Touch::One(2), Touch::One(3)], 300 * us), // one lock: in turn
            (2, &[Touch::One(1), Touch::One(2), Touch::One(3)], 200 * us), // 1 and 3 share a shard
            (4, &[Touch::One(1), Touch::One(2), Touch::One(3)], 100 * us), // all apart
            (4, &[Touch::All], 100 * us),                                  // 4 × 25 us in a row
            (4, &[Touch::One(1), Touch::All], 175 * us),                   // shard 0 to 25, waits for shard 1 to 100
        ];
        for &(shards, touches, want) in cases {
            let store = TaskStore::with_hold(shards, 100 * us);
            let last = touches.iter().map(|&t| store.lock_until(t, 0)).max();
            assert_eq!(last, Some(want), "{shards} shards, {touches:?}");
        }
        assert_eq!(TaskStore::new(4).lock_until(Touch::All, 7), 7);
        assert_eq!(TaskStore::with_hold(32, 1_000_000).capacity(), Some(32_000.0));
    }

    #[test]
    fn one_lock_completes_one_over_hold_per_second() {
        // Closed loop: 50 clients that resend when answered, each op 200 us under the lock:
        // over one simulated second one shard completes 5,000 and 8 shards 40,000 (ids spread).
        for (shards, want) in [(1usize, 5_000u64), (8, 40_000)] {
            let store = TaskStore::with_hold(shards, 200_000);
            let mut due: Vec<(u64, u64)> = (0..50u64).map(|c| (store.lock_until(Touch::One(c), 0), c)).collect();
            let mut done = 0u64;
            let mut next_id = 50u64;
            while let Some(&(t, _)) = due.iter().min() {
                if t > 1_000_000_000 {
                    break;
                }
                let i = due.iter().position(|&(u, _)| u == t).unwrap_or(0);
                done += 1;
                next_id += 1;
                due[i] = (store.lock_until(Touch::One(next_id), t), next_id);
            }
            let bounds = want - want / 100..=want;
            assert!(bounds.contains(&done), "{shards} shards: {done} in 1 s");
        }
    }

    #[test]
    fn counts_reads_by_id() {
        let store = TaskStore::new(3);
        for _ in 0..5 {
            store.create(Map::new());
        }
        // id read, times; an unknown id counts nothing
        let cases: &[(u64, u64)] = &[(1, 3), (4, 1), (5, 2), (99, 4)];
        for &(id, times) in cases {
            for _ in 0..times {
                assert_eq!(store.read(id).is_some(), id <= 5, "id {id}");
            }
        }
        store.get(2); // get, update and list do not count
        store.update(5, Map::new());
        store.list(0, 10);
        assert_eq!(store.reads(), Reads { by_id: vec![(1, 3), (4, 1), (5, 2)], total: 6 });
        store.delete(4);
        assert_eq!(store.reads(), Reads { by_id: vec![(1, 3), (5, 2)], total: 5 });
        store.reset_reads();
        assert_eq!(store.reads(), Reads::default());
        store.read(3);
        assert_eq!(store.reads().by_id, [(3, 1)]);
    }

    #[test]
    fn lists_in_id_order_across_shards() {
        let store = TaskStore::new(3);
        for i in 0..10 {
            store.create(fields(&format!(r#"{{"n": {i}}}"#)));
        }
        store.delete(4);
        let cases: &[(usize, usize, &[u64])] =
            &[(0, 3, &[1, 2, 3]), (2, 3, &[3, 5, 6]), (7, 5, &[9, 10]), (20, 5, &[]), (0, 0, &[])];
        for &(offset, limit, want) in cases {
            let page = store.list(offset, limit);
            let got: Vec<u64> =
                page.tasks.iter().filter_map(|t| serde_json::from_str::<Value>(t).ok()?.get("id")?.as_u64()).collect();
            assert_eq!(got, want, "offset {offset} limit {limit}");
            assert_eq!(page.total, 9);
        }
    }
}
