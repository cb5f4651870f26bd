//! server: serve, the listeners, one single-threaded event loop per thread, and stopping; `conn` runs one
//! connection, `http` frames requests and responses, `routes` answers them, `openai` reads and writes the
//! inference routes' JSON and events, `store` holds the Task API's data, `shared` is the state every thread
//! sees, `timer` sleeps with sub-millisecond precision.
//!
//! serve: listeners, one single-threaded event loop per thread, and stopping.
//!
//! Each of `--threads` threads runs its own current-thread tokio runtime with its own
//! listening socket, all bound to the same address with `SO_REUSEPORT`, so the kernel spreads
//! new connections over the threads and nothing is shared per request but the model's lock
//! (and only on modeled routes). With one thread (the default) there is one plain listener.

pub mod conn;
pub mod http;
pub mod openai;
pub mod routes;
pub mod shared;
pub mod store;
pub mod timer;

use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::config::error::TargetError;
use crate::config::plan::TargetPlan;
use crate::config::TargetConfig;
use crate::server::conn::serve_connection;
use crate::server::shared::Shared;
use crate::server::timer::Timer;
use crate::stats::summary::{StopReason, TargetSummary};

/// STOP_POLL is how often each thread checks the stop flag and the deadline.
const STOP_POLL: Duration = Duration::from_millis(20);
/// BACKLOG is the listen backlog asked for (the kernel caps it at somaxconn).
const BACKLOG: i32 = 4096;

/// serve validates `config`, listens, calls `on_ready` with the bound address (before any
/// request is accepted), and serves until `stop` is set or `--duration` has elapsed; then it
/// closes every connection and returns the run's summary.
#[allow(clippy::needless_pass_by_value, reason = "the caller hands its stop flag over, as to a thread")]
pub fn serve(
    config: TargetConfig,
    on_ready: impl FnOnce(SocketAddr),
    stop: Arc<AtomicBool>,
) -> Result<TargetSummary, TargetError> {
    serve_plan(config.validate()?, on_ready, stop)
}

/// serve_plan is [`serve`] for an already validated plan.
#[allow(clippy::needless_pass_by_value, reason = "the caller hands its stop flag over, as to a thread")]
pub fn serve_plan(
    plan: TargetPlan,
    on_ready: impl FnOnce(SocketAddr),
    stop: Arc<AtomicBool>,
) -> Result<TargetSummary, TargetError> {
    let listeners = bind(plan.bind, plan.threads)?;
    let address = listeners
        .first()
        .and_then(|l| l.local_addr().ok())
        .ok_or_else(|| TargetError::Internal("no listener".into()))?;
    let deadline = plan.duration.map(|d| Instant::now() + d);
    let shared = Arc::new(Shared::new(plan).map_err(TargetError::Runtime)?);
    on_ready(address);
    let halt = AtomicBool::new(false);
    let control = Control { stop: &stop, halt: &halt, deadline };
    let results: Vec<Result<(), TargetError>> = std::thread::scope(|scope| {
        let mut handles = Vec::new();
        for (index, listener) in listeners.into_iter().enumerate() {
            let (shared, control) = (&shared, &control);
            let spawned = std::thread::Builder::new()
                .name(format!("surge-target-{index}"))
                .spawn_scoped(scope, move || run_thread(listener, index, shared, control));
            match spawned {
                Ok(handle) => handles.push(Ok(handle)),
                Err(e) => {
                    halt.store(true, Ordering::Relaxed);
                    handles.push(Err(TargetError::Runtime(e)));
                }
            }
        }
        handles
            .into_iter()
            .map(|h| {
                let result = h.and_then(|h| {
                    h.join().unwrap_or_else(|_| Err(TargetError::Internal("a server thread panicked".into())))
                });
                if result.is_err() {
                    halt.store(true, Ordering::Relaxed);
                }
                result
            })
            .collect()
    });
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    let stopped_by = if stop.load(Ordering::Relaxed) { StopReason::Stop } else { StopReason::Duration };
    Ok(TargetSummary::collect(&shared, address, stopped_by))
}

/// Control is what tells server threads to stop.
struct Control<'a> {
    stop: &'a AtomicBool,
    halt: &'a AtomicBool,
    deadline: Option<Instant>,
}

impl Control<'_> {
    fn should_stop(&self) -> bool {
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            self.halt.store(true, Ordering::Relaxed);
        }
        self.stop.load(Ordering::Relaxed) || self.halt.load(Ordering::Relaxed)
    }
}

/// bind opens `threads` listening sockets on `addr` (sharing its port with `SO_REUSEPORT`
/// when more than one); port 0 becomes the free port the first one got.
fn bind(addr: SocketAddr, threads: usize) -> Result<Vec<TcpListener>, TargetError> {
    let mut listeners: Vec<TcpListener> = Vec::with_capacity(threads);
    let mut addr = addr;
    for _ in 0..threads.max(1) {
        let listener = listen(addr, threads > 1).map_err(|source| TargetError::Bind { addr, source })?;
        if let Ok(bound) = listener.local_addr() {
            addr = bound;
        }
        listeners.push(listener);
    }
    Ok(listeners)
}

fn listen(addr: SocketAddr, reuse_port: bool) -> std::io::Result<TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    #[cfg(unix)]
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    #[cfg(not(unix))]
    let _ = reuse_port;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

/// run_thread runs one thread's event loop: accept, spawn a task per connection, stop when
/// told; dropping the runtime closes its connections.
fn run_thread(
    listener: TcpListener,
    index: usize,
    shared: &Arc<Shared>,
    control: &Control<'_>,
) -> Result<(), TargetError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(TargetError::Runtime)?;
    let counters =
        shared.counters.get(index).cloned().ok_or_else(|| TargetError::Internal("no counters for thread".into()))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener).map_err(TargetError::Runtime)?;
        let (timer, driver) = Timer::new();
        if let Some(driver) = driver {
            tokio::spawn(driver);
        }
        let mut ticker = tokio::time::interval(STOP_POLL);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let open = shared.open_connections.fetch_add(1, Ordering::AcqRel) + 1;
                        if shared.plan.max_connections.is_some_and(|max| open > max) {
                            shared.open_connections.fetch_sub(1, Ordering::AcqRel);
                            counters.record_refused();
                            drop(stream);
                            continue;
                        }
                        counters.record_accepted();
                        let guard = OpenGuard(Arc::clone(shared));
                        let (shared, counters, timer) = (Arc::clone(shared), Arc::clone(&counters), timer.clone());
                        tokio::spawn(async move {
                            let _guard = guard;
                            serve_connection(stream, shared, counters, timer).await;
                        });
                    }
                    // Out of file descriptors or similar: back off instead of spinning.
                    Err(_) => tokio::time::sleep(Duration::from_millis(5)).await,
                },
                _ = ticker.tick() => {
                    if control.should_stop() {
                        break;
                    }
                }
            }
        }
        Ok(())
    })
}

/// OpenGuard counts a connection as open until its task ends (or is dropped with the runtime).
struct OpenGuard(Arc<Shared>);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open_connections.fetch_sub(1, Ordering::AcqRel);
    }
}
