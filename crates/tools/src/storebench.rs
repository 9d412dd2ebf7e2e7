//! `mahjong-server storebench`: how many events per second the store
//! persists when many tables write at once, on SQLite or Postgres.
//!
//! Each simulated table writes what a real one writes after a move: a batch
//! of a few events (real event texts), the input that caused them and its
//! game row, waiting for each batch to be committed before the next, as the
//! table actor does. The journal groups whatever the tables hand it into one
//! transaction per commit. The report gives events and batches per second and
//! the latency of a write (what a table waits before it may send).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::latency::Latencies;
use mahjong::protocol::ws::TableState;
use mahjong::rules::command::{Action, Command, PlayerId};
use mahjong::rules::event::Audience;
use mahjong::store::GameSource;
use mahjong::store::{Batch, EventRow, GameRow, Input, InputRow, Store};

/// The flags of `storebench`.
#[derive(clap::Args, Clone, Debug)]
pub struct StorebenchArgs {
    /// The database: `sqlite://FILE` or `postgres://...` (its tables are
    /// created if needed; the benchmark's games are left in it).
    #[arg(long, env = "DATABASE_URL")]
    pub database: String,
    /// Tables writing at once.
    #[arg(long, default_value_t = 2000)]
    pub tables: usize,
    /// Events in each batch (a discard with its draw and the answers is 3-6).
    #[arg(long, default_value_t = 4)]
    pub events: usize,
    /// Seconds to measure for.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Each table waits this long between batches, in milliseconds (0: as
    /// fast as the store allows).
    #[arg(long, default_value_t = 0)]
    pub pause_ms: u64,
}

/// Runs the benchmark and prints its report; the exit status says whether it ran.
pub fn run_command(args: StorebenchArgs) -> std::process::ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(report) => {
            println!("{report}");
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("storebench: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

async fn run(args: StorebenchArgs) -> Result<String, mahjong::store::StoreError> {
    let store = Store::open(&args.database).await?;
    let stop = Arc::new(AtomicBool::new(false));
    // The write latencies of every table, in microseconds.
    let latencies = Arc::new(Latencies::new());
    let run_id = uuid::Uuid::new_v4().simple().to_string();
    let mut tasks = Vec::new();
    for t in 0..args.tables {
        let (store, stop, id) = (store.clone(), stop.clone(), format!("bench-{run_id}-{t}"));
        let (events, pause, latencies) = (args.events.max(1), Duration::from_millis(args.pause_ms), latencies.clone());
        tasks.push(tokio::spawn(async move { table(store, id, events, pause, stop, &latencies).await }));
    }
    // Let every table write its first batch (the game's creation) first.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let started = Instant::now();
    let cpu_before = thread_cpu();
    tokio::time::sleep(Duration::from_secs(args.seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let cpu_after = thread_cpu();
    let mut batches = 0;
    for task in tasks {
        if let Ok(Ok(written)) = task.await {
            batches += written;
        }
    }
    store.close().await;
    let ms = |us: u64| format!("{:.2} ms", us as f64 / 1000.0);
    let latency = match latencies.summary() {
        Some(l) => format!("p50 {}, p99 {}, max {}", ms(l.p50_us), ms(l.p99_us), ms(l.max_us)),
        None => "none measured".to_string(),
    };
    // CPU time per batch: a measure of the write path's cost that other
    // work on the machine does not change (the latencies it does).
    let per_batch = |(before, after): (f64, f64)| (after - before) / batches.max(1) as f64 * 1e6;
    let cpu = format!(
        "{:.1} µs per batch in all, {:.1} µs in SQLite's thread",
        per_batch((cpu_before.0, cpu_after.0)),
        per_batch((cpu_before.1, cpu_after.1))
    );
    Ok(format!(
        "backend {:?}, {} tables, {} events per batch, {:.1} s\n\
         batches committed: {batches} ({:.0}/s)\n\
         events persisted:  {} ({:.0}/s)\n\
         write latency:     {latency}\n\
         CPU:               {cpu}",
        store.backend(),
        args.tables,
        args.events,
        elapsed,
        batches as f64 / elapsed,
        batches * args.events as u64,
        (batches * args.events as u64) as f64 / elapsed,
    ))
}

/// CPU seconds used so far by this process and by its SQLite threads (sqlx
/// names each connection's thread `sqlx-sqlite-worker-N`), from `/proc`.
fn thread_cpu() -> (f64, f64) {
    let seconds = crate::machine::stat_cpu_seconds;
    let Ok(me) = procfs::process::Process::myself() else { return (0.0, 0.0) };
    let all = me.stat().map_or(0.0, |s| seconds(&s));
    let sqlite = me
        .tasks()
        .into_iter()
        .flatten()
        .filter_map(|task| task.ok()?.stat().ok())
        .filter(|stat| stat.comm.starts_with("sqlx-sqlite"))
        .map(|stat| seconds(&stat))
        .sum();
    (all, sqlite)
}

/// One simulated table: writes batches until told to stop; counts those
/// written while measuring, and records their latencies.
async fn table(
    store: Store,
    id: String,
    events: usize,
    pause: Duration,
    stop: Arc<AtomicBool>,
    latencies: &Latencies,
) -> Result<u64, mahjong::store::StoreError> {
    let mut row = GameRow {
        name: "storebench".into(),
        preset: mahjong::rules::presets::DEFAULT_PRESET.into(),
        source: GameSource::Live,
        state: TableState::Playing,
        created_us: mahjong::store::now_us(),
        finished_us: None,
        hands: 1,
        scores: [0; 4],
        manager: None,
        last_seq: 0,
        rng_pos: 0,
    };
    let mut first = Batch::new(id.clone(), row.clone());
    first.settings = Some("{}".into());
    store.write(first).await?;
    let mut written = 0;
    let mut n = 0;
    let measuring_from = Instant::now() + Duration::from_secs(1);
    while !stop.load(Ordering::Relaxed) {
        n += 1;
        let mut batch = Batch::new(id.clone(), row.clone());
        let command = Command::Act { player: PlayerId(0), action: Action::Pass { discard: n as u32 } };
        batch.inputs.push(InputRow { n, seq: row.last_seq, input: Input::Engine { command } });
        for _ in 0..events {
            row.last_seq += 1;
            let seq = row.last_seq;
            batch.events.push(EventRow {
                seq,
                at_us: mahjong::store::now_us(),
                hand: 1,
                audience: Audience::Everyone,
                body: format!(
                    r#"{{"type":"event","seq":{seq},"at_us":{},"event":{{"type":"discarded","player":2,"tile":"5B","discard":{n},"calling":false}}}}"#,
                    mahjong::store::now_us()
                ),
            });
        }
        batch.game = row.clone();
        // As at a table: a move changes only the stream's position, which the
        // events carry; the game row is written when something else changes.
        batch.game_changed = false;
        let at = Instant::now();
        store.write(batch).await?;
        if at >= measuring_from && !stop.load(Ordering::Relaxed) {
            written += 1;
            latencies.record(at.elapsed().as_micros().try_into().unwrap_or(u64::MAX));
        }
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
    }
    Ok(written)
}
