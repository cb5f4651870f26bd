//! The Task API's in-memory store, split into independently locked shards.
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
    shards: Box<[Mutex<HashMap<u64, Task>>]>,
    next_id: AtomicU64,
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

    fn shard(&self, id: u64) -> MutexGuard<'_, HashMap<u64, Task>> {
        let index = (id % self.shards.len() as u64) as usize;
        self.shards[index].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// create stores `fields` (any `"id"` in it is replaced) under a new id and returns the task.
    pub fn create(&self, fields: Map<String, Value>) -> (u64, Task) {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let task = render(id, fields);
        self.shard(id).insert(id, Arc::clone(&task));
        (id, task)
    }

    /// get returns task `id`, if it exists.
    pub fn get(&self, id: u64) -> Option<Task> {
        self.shard(id).get(&id).cloned()
    }

    /// update replaces task `id`'s fields, keeping its id; `None` if it does not exist.
    pub fn update(&self, id: u64, fields: Map<String, Value>) -> Option<Task> {
        let mut shard = self.shard(id);
        let slot = shard.get_mut(&id)?;
        *slot = render(id, fields);
        Some(Arc::clone(slot))
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
