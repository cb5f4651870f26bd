//! End-to-end scenario tests against the reference target (in-process): flows, weighted
//! mixes, executors, think times, start offsets, checks and captures. Expected counts follow
//! from each plan, and the target's own /stats must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::target;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde_json::{json, Value};
use surge_engine::{run, NoObserver, Plan, RunResult};
use target::Server;

fn plan(server: &Server, scenarios: Value, extra: Value) -> Plan {
    let mut doc = json!({"target": {"url": format!("http://{}/", server.addr)}, "scenarios": scenarios});
    if let (Some(doc), Some(extra)) = (doc.as_object_mut(), extra.as_object()) {
        doc.extend(extra.clone());
    }
    Plan::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{e:?}"))
}

fn run_plan(plan: &Plan) -> RunResult {
    run(plan, &mut NoObserver, Arc::new(AtomicBool::new(false))).unwrap_or_else(|e| panic!("{e}"))
}

fn route(stats: &Value, name: &str) -> u64 {
    stats["received_by_route"][name].as_u64().unwrap_or(0)
}

fn get(path: &str) -> Value {
    json!({"request": {"method": "GET", "path": path}})
}

#[test]
fn a_sequence_runs_its_steps_in_order_every_iteration() {
    let server = Server::start("{}");
    let flow = json!({"sequences": [{"steps": [
        {"tag": "create", "request": {"method": "POST", "path": "/tasks", "body": "{\"title\": \"t\"}"},
         "checks": [{"name": "created", "type": "status", "in": [201]}],
         "captures": [{"name": "id", "from": "json", "path": "$.id"}]},
        get("/tasks?limit=1"),
        {"tag": "health", "request": {"path": "/health"}}
    ]}]});
    let p = plan(
        &server,
        json!([{"name": "crud", "executor": {"type": "shared-iterations", "vus": 4, "iterations": 100}, "flow": flow}]),
        json!({"threads": 2}),
    );
    let result = run_plan(&p);
    let stats = server.stats();
    assert_eq!(route(&stats, "POST /tasks"), 100);
    assert_eq!(route(&stats, "GET /tasks"), 100);
    assert_eq!(route(&stats, "GET /health"), 100);
    assert_eq!(result.requests.sent, 300);
    let s = &result.scenarios[0];
    assert_eq!((s.iterations.iterations_started, s.iterations.iterations_completed), (100, 100));
    let tags: Vec<(&str, u64)> = result.tags.iter().map(|t| (t.tag.as_str(), t.requests.responses)).collect();
    assert_eq!(tags, [("create", 100), ("GET /tasks", 100), ("health", 100)]);
    assert_eq!((result.checks[0].passes, result.checks[0].fails), (100, 0));
    assert_eq!((result.captures[0].found, result.captures[0].missing), (100, 0));
}

#[test]
fn a_weighted_mix_follows_its_weights() {
    let server = Server::start("{}");
    let flow = json!({"sequences": [
        {"weight": 70, "steps": [get("/health")]},
        {"weight": 25, "steps": [get("/tasks?limit=1")]},
        {"weight": 5, "steps": [get("/delay/0")]}
    ]});
    let p = plan(
        &server,
        json!([{"name": "mix", "executor": {"type": "shared-iterations", "vus": 8, "iterations": 4000}, "flow": flow}]),
        json!({}),
    );
    let result = run_plan(&p);
    let stats = server.stats();
    let counts = [route(&stats, "GET /health"), route(&stats, "GET /tasks"), route(&stats, "GET /delay/{ms}")];
    assert_eq!(counts.iter().sum::<u64>(), 4000, "{stats}");
    for (count, share) in counts.iter().zip([0.70, 0.25, 0.05]) {
        let observed = *count as f64 / 4000.0;
        // 4000 draws: three standard deviations of a 70 % share are ~2.2 %.
        assert!((observed - share).abs() < 0.025, "{counts:?}");
    }
    assert_eq!(result.requests.sent, 4000);
}

#[test]
fn per_vu_iterations_run_exactly_that_many_per_vu() {
    let server = Server::start("{}");
    let flow = json!({"sequences": [{"steps": [get("/health"), get("/delay/1")]}]});
    let p = plan(
        &server,
        json!([{"name": "pvi", "executor": {"type": "per-vu-iterations", "vus": 3, "iterations": 7}, "flow": flow}]),
        json!({"threads": 2}),
    );
    let result = run_plan(&p);
    assert_eq!(result.scenarios[0].iterations.iterations_completed, 21);
    assert_eq!(route(&server.stats(), "GET /health"), 21);
    assert_eq!(result.requests.sent, 42);
    assert_eq!(result.stop_reason, surge_engine::result::StopReason::Iterations);
}

#[test]
fn think_time_paces_each_virtual_user() {
    let server = Server::start("{}");
    // 2 VUs, each iteration is a fast request then 100 ms of thinking: ~10 iterations per
    // VU in a second (the last one still thinking when the scenario ends is not counted twice).
    let flow =
        json!({"sequences": [{"steps": [get("/health")]}], "think_after_iteration": {"type": "fixed", "s": 0.1}});
    let p = plan(
        &server,
        json!([{"name": "think", "executor": {"type": "constant-vus", "vus": 2, "duration_s": 1.0}, "flow": flow}]),
        json!({"limits": {"grace_period_s": 0.0}}),
    );
    let result = run_plan(&p);
    let sent = result.requests.sent;
    assert!((18..=22).contains(&sent), "sent {sent}");
    assert_eq!(sent, route(&server.stats(), "GET /health"));
}

#[test]
fn ramping_vus_follow_their_stages() {
    let server = Server::start("{}");
    let flow = json!({"sequences": [{"steps": [get("/delay/5")]}]});
    let executor = json!({"type": "ramping-vus", "start_vus": 0, "stages": [
        {"duration_s": 0.6, "target": 6}, {"duration_s": 0.6, "target": 6}, {"duration_s": 0.6, "target": 0}]});
    let p = plan(
        &server,
        json!([{"name": "ramp", "executor": executor, "flow": flow}]),
        json!({"interval_s": 0.3, "threads": 2}),
    );
    let result = run_plan(&p);
    let active: Vec<u64> = result.intervals.iter().map(|i| i.scenarios[0].active_vus).collect();
    // Intervals end at 0.3 s (3 VUs on the way up), 0.6, 0.9, 1.2 (6 held), 1.5 (3 left).
    assert!(active.len() >= 6, "{active:?}");
    assert!((2..=4).contains(&active[0]), "{active:?}");
    assert!(active[1..4].iter().all(|&n| (5..=6).contains(&n)), "{active:?}");
    assert!((2..=4).contains(&active[4]), "{active:?}");
    assert!(result.peak_open_connections <= 6, "{}", result.peak_open_connections);
    assert_eq!(result.requests.sent, result.requests.responses);
    assert_eq!(result.requests.sent, route(&server.stats(), "GET /delay/{ms}"));
}

#[test]
fn scenarios_run_in_parallel_from_their_start_times() {
    let server = Server::start("{}");
    let early = json!({"name": "early", "executor": {"type": "constant-vus", "vus": 1, "duration_s": 1.0},
                       "flow": {"sequences": [{"steps": [get("/health")]}]}});
    let late = json!({"name": "late", "start_time_s": 0.5, "executor": {"type": "constant-arrival-rate", "rate": 100, "duration_s": 0.5, "max_vus": 10},
                      "flow": {"sequences": [{"steps": [get("/tasks?limit=1")]}]}});
    let p = plan(&server, json!([early, late]), json!({"interval_s": 0.25}));
    let result = run_plan(&p);
    let late_per_interval: Vec<u64> =
        result.intervals.iter().map(|i| i.scenarios[1].iterations.iterations_started).collect();
    assert_eq!(&late_per_interval[..2], &[0, 0], "{late_per_interval:?}");
    assert_eq!(result.scenarios[1].iterations.iterations_started, 50);
    assert_eq!(route(&server.stats(), "GET /tasks"), 50);
    assert!(result.scenarios[0].requests.sent > 50);
    assert_eq!(result.requests.sent, result.scenarios[0].requests.sent + 50);
}

#[test]
fn checks_count_passes_and_fails_without_stopping_iterations() {
    let server = Server::start("{}");
    let steps = json!([
        {"tag": "missing", "request": {"path": "/tasks/999999"}, "checks": [
            {"name": "is 200", "type": "status", "in": [200]},
            {"name": "says not found", "type": "body_contains", "text": "not found"},
            {"name": "json error", "type": "json_equals", "path": "$.error", "value": "/tasks/999999 not found"},
            {"name": "json wrong", "type": "json_equals", "path": "$.error", "value": "something else"},
            {"name": "no location", "type": "header_present", "header": "Location"}]},
        {"tag": "health", "request": {"path": "/health"}, "checks": [
            {"name": "fast", "type": "latency_under", "ms": 10000},
            {"name": "ok body", "type": "body_matches", "pattern": "^ok$"}]}
    ]);
    let p = plan(
        &server,
        json!([{"name": "checks", "executor": {"type": "shared-iterations", "vus": 2, "iterations": 20}, "flow": {"sequences": [{"steps": steps}]}}]),
        json!({}),
    );
    let result = run_plan(&p);
    let outcomes: Vec<(&str, u64, u64)> = result.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(
        outcomes,
        [
            ("is 200", 0, 20),
            ("says not found", 20, 0),
            ("json error", 20, 0),
            ("json wrong", 0, 20),
            ("no location", 0, 20),
            ("fast", 20, 0),
            ("ok body", 20, 0)
        ]
    );
    assert_eq!(route(&server.stats(), "GET /health"), 20, "failed checks never stop an iteration");
}

#[test]
fn a_capture_that_finds_nothing_ends_its_iteration_and_is_counted() {
    let server = Server::start("{}");
    let steps = json!([
        {"request": {"path": "/health"}, "captures": [{"name": "token", "from": "json", "path": "$.token"}]},
        {"request": {"path": "/tasks?limit=1"}}
    ]);
    let p = plan(
        &server,
        json!([{"name": "capture", "executor": {"type": "shared-iterations", "vus": 1, "iterations": 5}, "flow": {"sequences": [{"steps": steps}]}}]),
        json!({}),
    );
    let result = run_plan(&p);
    assert_eq!((result.captures[0].found, result.captures[0].missing), (0, 5));
    assert_eq!(result.scenarios[0].iterations.iterations_aborted, 5);
    assert_eq!(route(&server.stats(), "GET /tasks"), 0);
}

#[test]
fn templates_fill_in_variables_and_captures_and_pools_carry_ids_to_the_next_run() {
    let server = Server::start("{}");
    // Setup-like run: create 50 tasks with counter titles, keep their ids in a pool.
    let create = json!({"request": {"method": "POST", "path": "/tasks", "headers": [["X-Title", "t{{n}}"]],
                                    "body": "{\"title\": \"t{{n}}\", \"owner\": \"{{who}}\"}"},
                        "captures": [{"name": "task_ids", "to_pool": true, "from": "json", "path": "$.id"}]});
    let setup = plan(
        &server,
        json!([{"name": "setup", "executor": {"type": "shared-iterations", "vus": 3, "iterations": 50},
        "variables": [{"name": "n", "type": "counter", "start": 1}, {"name": "who", "type": "choice", "values": ["ann", "bob"]}],
        "flow": {"sequences": [{"steps": [create]}]}}]),
        json!({"threads": 2}),
    );
    let created = run_plan(&setup);
    let mut ids: Vec<u64> = created.pools["task_ids"].iter().map(|v| v.parse().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=50).collect::<Vec<u64>>());
    let list = server.client().get("/tasks?limit=100").body;
    let tasks: Value = serde_json::from_str(&list).unwrap();
    let mut titles: Vec<String> =
        tasks["tasks"].as_array().unwrap().iter().map(|t| t["title"].as_str().unwrap().to_string()).collect();
    titles.sort_unstable();
    titles.dedup();
    assert_eq!(titles.len(), 50, "counter values are unique across threads: {titles:?}");
    assert!(tasks["tasks"].as_array().unwrap().iter().all(|t| t["owner"] == "ann" || t["owner"] == "bob"));

    // Main run: read the pool's tasks (Zipf-hot), and per VU create one, read it back by the
    // captured id and update it.
    let read = json!({"tag": "read", "request": {"path": "/tasks/{{task}}"}, "checks": [{"name": "read ok", "type": "status", "in": [200]}]});
    let crud = json!([
        {"tag": "create", "request": {"method": "POST", "path": "/tasks", "body": "{\"title\": \"{{rid}}\"}"},
         "captures": [{"name": "id", "from": "json", "path": "$.id"}, {"name": "title", "from": "json", "path": "$.title"}]},
        {"tag": "get", "request": {"path": "/tasks/{{id}}"}, "checks": [{"name": "get ok", "type": "status", "in": [200]}]},
        {"tag": "put", "request": {"method": "PUT", "path": "/tasks/{{id}}", "body": "{\"title\": \"{{title}}-done\"}"},
         "checks": [{"name": "put ok", "type": "status", "in": [200]}, {"name": "renamed", "type": "body_contains", "text": "-done"}]}
    ]);
    let main = plan(
        &server,
        json!([
            {"name": "reads", "executor": {"type": "shared-iterations", "vus": 4, "iterations": 400},
             "variables": [{"name": "task", "type": "pool", "pool": "task_ids", "pick": "zipf", "s": 1.1}],
             "flow": {"sequences": [{"steps": [read]}]}},
            {"name": "writes", "executor": {"type": "shared-iterations", "vus": 2, "iterations": 20},
             "variables": [{"name": "rid", "type": "uuid"}],
             "flow": {"sequences": [{"steps": crud}]}}
        ]),
        json!({"pools": created.pools}),
    );
    let result = run_plan(&main);
    let checks: Vec<(&str, u64, u64)> = result.checks.iter().map(|c| (c.name.as_str(), c.passes, c.fails)).collect();
    assert_eq!(checks, [("read ok", 400, 0), ("get ok", 20, 0), ("put ok", 20, 0), ("renamed", 20, 0)]);
    let stats = server.stats();
    assert_eq!(route(&stats, "GET /tasks/{id}"), 420);
    assert_eq!(route(&stats, "PUT /tasks/{id}"), 20);
}

#[test]
fn template_and_variable_mistakes_are_reported_before_anything_runs() {
    let json = json!({"target": {"url": "http://127.0.0.1:9/"}, "scenarios": [{"name": "s",
    "executor": {"type": "constant-vus", "vus": 1, "duration_s": 1},
    "variables": [{"name": "n", "type": "uniform", "min": 1, "max": 5}],
    "flow": {"sequences": [{"steps": [
        {"request": {"path": "/tasks/{{tsk}}", "headers": [["X", "{{n"]]}},
        {"request": {"path": "/x"}, "captures": [{"name": "n", "from": "header", "header": "Location"}]}
    ]}]}}]});
    let errors = Plan::from_json(&json.to_string()).err().unwrap_or_default();
    let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
    assert!(fields.contains(&"scenarios[0].flow.sequences[0].steps[0].request.path"), "{errors:?}");
    assert!(fields.contains(&"scenarios[0].flow.sequences[0].steps[0].request.headers[0]"), "{errors:?}");
    assert!(fields.contains(&"scenarios[0].flow.sequences[0].steps[1].captures[0].name"), "{errors:?}");
    let path_error = errors.iter().find(|e| e.field.ends_with("request.path")).unwrap();
    assert!(path_error.message.contains("tsk"), "{path_error}");
    let bad_variable = json.to_string().replace(r#""max":5"#, r#""max":0"#);
    let errors = Plan::from_json(&bad_variable).err().unwrap_or_default();
    assert_eq!(errors[0].field, "scenarios[0].variables[0].max", "{errors:?}");
}

#[test]
fn unique_rows_are_refused_when_vus_outnumber_them() {
    let server = Server::start("{}");
    let p = plan(
        &server,
        json!([{"name": "u", "executor": {"type": "constant-vus", "vus": 3, "duration_s": 1},
        "variables": [{"name": "user", "type": "rows", "columns": ["id"], "rows": [["a"], ["b"]], "pick": "unique"}],
        "flow": {"sequences": [{"steps": [{"request": {"path": "/health?u={{user.id}}"}}]}]}}]),
        json!({"threads": 1}),
    );
    let error =
        run(&p, &mut NoObserver, Arc::new(AtomicBool::new(false))).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("2 rows for 3 VUs"), "{error}");
    assert_eq!(route(&server.stats(), "GET /health"), 0, "nothing ran");
}

#[test]
fn a_scenario_with_fewer_vus_than_threads_still_ends_on_every_thread() {
    let server = Server::start("{}");
    let one = |name: &str, executor: Value| json!({"name": name, "executor": executor, "flow": {"sequences": [{"steps": [get("/health")]}]}});
    let p = plan(
        &server,
        json!([
            one("shared", json!({"type": "shared-iterations", "vus": 1, "iterations": 10})),
            one("per-vu", json!({"type": "per-vu-iterations", "vus": 1, "iterations": 10}))
        ]),
        json!({"threads": 4}),
    );
    let began = std::time::Instant::now();
    let result = run_plan(&p);
    assert!(began.elapsed().as_secs_f64() < 5.0, "took {:?}", began.elapsed());
    assert_eq!(result.requests.sent, 20);
}

#[test]
fn ramping_arrival_rate_follows_its_stages_within_one_percent_per_interval() {
    let server = Server::start("{}");
    // 400 -> 2000/s over 2 s, hold 1 s, down to 500/s over 1 s; 0.5 s intervals. The
    // first interval schedules 300 iterations, so 1 % is 3: no absolute floor is needed.
    let start_rate = 400.0;
    let stages = [(2.0, 2000.0), (1.0, 2000.0), (1.0, 500.0)];
    let executor = json!({"type": "ramping-arrival-rate", "start_rate": start_rate, "max_vus": 200, "pre_allocated_vus": 50,
        "stages": stages.iter().map(|(d, r)| json!({"duration_s": d, "target_rate": r})).collect::<Vec<_>>()});
    let p = plan(
        &server,
        json!([{"name": "ramp", "executor": executor, "flow": {"sequences": [{"steps": [get("/health")]}]}}]),
        json!({"interval_s": 0.5, "threads": 2}),
    );
    let result = run_plan(&p);
    // The schedule's count over [a, b] is the integral of the piecewise-linear rate.
    let rate_at = |t: f64| {
        let (mut start, mut from) = (0.0, start_rate);
        for (d, to) in stages {
            if t <= start + d {
                return from + (to - from) * (t - start) / d;
            }
            start += d;
            from = to;
        }
        from
    };
    let integral = |a: f64, b: f64| {
        (0..1000).map(|i| rate_at(a + (b - a) * (f64::from(i) + 0.5) / 1000.0)).sum::<f64>() * (b - a) / 1000.0
    };
    // The last interval ends when the load stops, a little past 4 s.
    let full: Vec<_> = result.intervals.iter().filter(|i| i.end_s <= 4.05 && i.end_s - i.start_s > 0.499).collect();
    assert_eq!(full.len(), 8, "{:?}", result.intervals.iter().map(|i| (i.start_s, i.end_s)).collect::<Vec<_>>());
    // An iteration counts where it started: one sent late by up to the run's worst send lag
    // moves across an interval's edge (a few ms of a busy machine at 2,000/s is 1-2 %), so
    // each edge allows the rate there times that lag on top of the 1 %.
    let lag_s = result.latency.send_lag.max_ms / 1000.0;
    for interval in full {
        let expected = integral(interval.start_s, interval.end_s);
        let started = interval.scenarios[0].iterations.iterations_started as f64;
        let moved = (rate_at(interval.start_s) + rate_at(interval.end_s)) * lag_s;
        assert!(
            (started - expected).abs() <= expected * 0.01 + moved,
            "[{}, {}]: started {started}, scheduled {expected:.1}, send lag max {lag_s} s",
            interval.start_s,
            interval.end_s
        );
    }
    let total: f64 = stages
        .iter()
        .scan(start_rate, |from, (d, to)| {
            let n = (*from + to) / 2.0 * d;
            *from = *to;
            Some(n)
        })
        .sum();
    assert_eq!(
        result.scenarios[0].iterations.iterations_started + result.scenarios[0].iterations.iterations_dropped,
        total as u64
    );
    assert_eq!(result.requests.sent, route(&server.stats(), "GET /health"));
}

#[test]
#[allow(clippy::many_single_char_names, reason = "the bindings are named after the plan's variables")]
fn every_variable_kind_and_capture_source_reaches_the_server() {
    let server = Server::start("{}");
    let body = r#"{"u": "{{u}}", "z": "{{z}}", "c": "{{c}}", "uid": "{{id}}", "s": "{{s}}", "k": "{{k}}", "seq": "{{seq.v}}", "rnd": "{{rnd.v}}", "uniq": "{{uniq.v}}", "n": "{{n}}"}"#;
    let rows = |n: usize| (0..n).map(|i| vec![format!("r{i}")]).collect::<Vec<_>>();
    let variables = json!([
        {"name": "u", "type": "uniform", "min": 10, "max": 20},
        {"name": "z", "type": "zipf", "n": 50, "s": 1.2},
        {"name": "c", "type": "choice", "values": ["x", "y"]},
        {"name": "id", "type": "uuid"},
        {"name": "s", "type": "random-string", "length": 8, "alphabet": "ab"},
        {"name": "k", "type": "constant", "value": "fixed"},
        {"name": "seq", "type": "rows", "columns": ["v"], "rows": rows(7), "pick": "sequential"},
        {"name": "rnd", "type": "rows", "columns": ["v"], "rows": rows(7), "pick": "random"},
        {"name": "uniq", "type": "rows", "columns": ["v"], "rows": rows(4), "pick": "unique"},
        {"name": "n", "type": "counter", "start": 100, "step": 10}
    ]);
    let steps = json!([
        {"tag": "create", "request": {"method": "POST", "path": "/tasks", "body": body},
         "captures": [{"name": "where", "from": "header", "header": "Location"},
                      {"name": "title_id", "from": "regex", "pattern": "\"id\":\\s*(\\d+)"}]},
        {"tag": "read", "request": {"path": "{{where}}?again={{title_id}}"}, "checks": [{"name": "found", "type": "status", "in": [200]}]}
    ]);
    // Each VU runs its own 50 (with shared iterations a thread that starts late may find none
    // left, and its VUs' rows never reach the server).
    let p = plan(
        &server,
        json!([{"name": "vars", "executor": {"type": "per-vu-iterations", "vus": 4, "iterations": 50},
        "variables": variables, "flow": {"sequences": [{"steps": steps}]}}]),
        json!({"threads": 2}),
    );
    let result = run_plan(&p);
    assert_eq!(
        (result.checks[0].passes, result.checks[0].fails),
        (200, 0),
        "Location and regex captures built the read path"
    );
    assert_eq!(result.captures.iter().map(|c| (c.found, c.missing)).collect::<Vec<_>>(), [(200, 0), (200, 0)]);
    let tasks: Value = serde_json::from_str(&server.client().get("/tasks?limit=1000").body).unwrap();
    let tasks = tasks["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 200);
    let field = |t: &Value, k: &str| t[k].as_str().unwrap().to_string();
    let mut ids = std::collections::BTreeSet::new();
    let mut counters = std::collections::BTreeSet::new();
    let mut uniques = std::collections::BTreeSet::new();
    for t in tasks {
        let u: i64 = field(t, "u").parse().unwrap();
        assert!((10..=20).contains(&u), "{t}");
        let z: u64 = field(t, "z").parse().unwrap();
        assert!((1..=50).contains(&z), "{t}");
        assert!(["x", "y"].contains(&field(t, "c").as_str()));
        let id = field(t, "uid");
        assert!(id.len() == 36 && id.as_bytes()[14] == b'4', "{id}");
        ids.insert(id);
        let s = field(t, "s");
        assert!(s.len() == 8 && s.bytes().all(|b| b == b'a' || b == b'b'), "{s}");
        assert_eq!(field(t, "k"), "fixed");
        assert!(field(t, "seq").starts_with('r') && field(t, "rnd").starts_with('r'));
        uniques.insert(field(t, "uniq"));
        let n: i64 = field(t, "n").parse().unwrap();
        assert_eq!((n - 100) % 10, 0);
        counters.insert(n);
    }
    assert_eq!(ids.len(), 200, "uuids are distinct");
    assert_eq!(counters.len(), 200, "counter values are distinct");
    assert_eq!(uniques.len(), 4, "4 VUs, each with its own row: {uniques:?}");
    let zipf_ones = tasks.iter().filter(|t| field(t, "z") == "1").count();
    assert!(zipf_ones > 30, "rank 1 is the hottest of Zipf(50, 1.2) (~28 % of draws): {zipf_ones}");
}

#[test]
fn a_step_timeout_applies_to_that_step_only() {
    let server = Server::start("{}");
    let steps = json!([
        {"tag": "slow", "timeout_s": 0.1, "request": {"path": "/delay/400"}},
        {"tag": "patient", "request": {"path": "/delay/150"}}
    ]);
    let p = plan(
        &server,
        json!([{"name": "t", "executor": {"type": "shared-iterations", "vus": 2, "iterations": 4},
        "flow": {"sequences": [{"steps": steps}]}}]),
        json!({"limits": {"timeout_s": 1.0}}),
    );
    let result = run_plan(&p);
    let by_tag: Vec<(&str, u64, u64)> =
        result.tags.iter().map(|t| (t.tag.as_str(), t.requests.timed_out, t.requests.succeeded)).collect();
    assert_eq!(
        by_tag,
        [("slow", 4, 0), ("patient", 0, 4)],
        "{:?}",
        result.tags.iter().map(|t| &t.requests).collect::<Vec<_>>()
    );
    let slow = &result.tags[0].latency.all;
    assert!(slow.min_ms >= 99.0 && slow.max_ms < 300.0, "timeouts fire at 100 ms: {slow:?}");
}
