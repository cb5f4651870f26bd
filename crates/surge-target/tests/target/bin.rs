//! The `surge-target` binary: flags, exit codes, printed address.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_surge-target")).args(args).output().unwrap();
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

#[test]
fn bad_flags_exit_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["--workers", "0", "--service-time", "1ms"], "--workers: must be from 1"),
        (&["--workers", "two"], "--workers: expected an integer"),
        (&["--service-time", "10ms"], "--service-time: needs --workers"),
        (&["--queue=4"], "--queue: needs --workers"),
        (&["--error-rate", "7"], "--error-rate: must be from 0 to 1"),
        (&["--stall-every", "1s", "--stall-for", "1s"], "--stall-for: must be shorter"),
        (&["--bind", "nowhere"], "--bind: `nowhere` is not HOST:PORT"),
        (&["--rate-limit", "-3"], "--rate-limit: must be above 0"),
        (&["--wrokers", "3"], "--wrokers: unknown flag"),
        (&["--workers"], "--workers: needs a value"),
        (&["stray"], "unexpected argument `stray`"),
        (&["--workers", "4", "--service-time", "1ms", "--contention", "1"], "--contention: must be from 0 to below 1"),
        (&["--workers", "4", "--service-time", "1ms", "--coherency=-0.5"], "--coherency: must be from 0 to 1"),
        (&["--thread-per-connection"], "--thread-per-connection: needs --workers"),
        (
            &["--thread-per-connection=maybe", "--workers", "1", "--service-time", "1ms"],
            "--thread-per-connection: expected true or false",
        ),
        (&["--keepalive-timeout", "5"], "--keepalive-timeout: expected a duration"),
    ];
    for (args, want) in cases {
        let (code, _, stderr) = run(args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}

#[test]
fn serves_for_a_duration_and_prints_its_address() {
    let (code, stdout, stderr) =
        run(&["--bind", "127.0.0.1:0", "--duration", "200ms", "--workers", "4", "--service-time", "10ms"]);
    assert_eq!(code, Some(0), "{stderr}");
    let first = stdout.lines().next().unwrap_or_default();
    assert!(first.starts_with("surge target listening on http://127.0.0.1:"), "{stdout}");
    assert!(stdout.contains("capacity 400.0 req/s"), "{stdout}");
    assert!(stdout.contains(r#""stopped_by":"duration""#), "{stdout}");
}

#[test]
fn thread_per_connection_is_a_switch() {
    let (code, stdout, stderr) = run(&[
        "--bind",
        "127.0.0.1:0",
        "--duration",
        "100ms",
        "--workers",
        "8",
        "--thread-per-connection",
        "--service-time",
        "1ms",
        "--contention",
        "0.05",
        "--coherency",
        "0.001",
        "--keepalive-timeout",
        "5s",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("thread per connection: each of the 8 workers"), "{stdout}");
    assert!(stdout.contains("scalability law: σ = 0.05, κ = 0.001"), "{stdout}");
    assert!(stdout.contains("keep-alive timeout: a connection idle for 5s is closed"), "{stdout}");
}
