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
/// handed out in increasing order from 1 and never reused.
#[derive(Debug)]
pub struct TaskStore {
    shards: Box<[Mutex<HashMap<u64, Entry>>]>,
    next_id: AtomicU64,
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
        let shards = (0..shards.max(1)).map(|_| Mutex::new(HashMap::new())).collect();
        Self { shards, next_id: AtomicU64::new(1) }
    }

    fn shard(&self, id: u64) -> MutexGuard<'_, HashMap<u64, Entry>> {
        let index = (id % self.shards.len() as u64) as usize;
        self.shards[index].lock().unwrap_or_else(PoisonError::into_inner)
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
        for shard in self.shards.iter() {
            let shard = shard.lock().unwrap_or_else(PoisonError::into_inner);
            by_id.extend(shard.iter().filter(|(_, e)| e.reads > 0).map(|(&id, e)| (id, e.reads)));
        }
        by_id.sort_unstable();
        let total = by_id.iter().map(|&(_, n)| n).sum();
        Reads { by_id, total }
    }

    /// reset_reads sets every task's read count to zero.
    pub fn reset_reads(&self) {
        for shard in self.shards.iter() {
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
        for shard in self.shards.iter() {
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
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(PoisonError::into_inner).len())
            .sum()
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
        let cases: &[(usize, usize, &[u64])] = &[
            (0, 3, &[1, 2, 3]),
            (2, 3, &[3, 5, 6]),
            (7, 5, &[9, 10]),
            (20, 5, &[]),
            (0, 0, &[]),
        ];
        for &(offset, limit, want) in cases {
            let page = store.list(offset, limit);
            let got: Vec<u64> = page
                .tasks
                .iter()
                .filter_map(|t| serde_json::from_str::<Value>(t).ok()?.get("id")?.as_u64())
                .collect();
            assert_eq!(got, want, "offset {offset} limit {limit}");
            assert_eq!(page.total, 9);
        }
    }
}
