//! A small mutational fuzzer for the core's parsers, on stable Rust (cargo-fuzz needs a nightly
//! toolchain). `make fuzz` runs it; by hand:
//!
//! ```text
//! cargo run -p hypercuboid-core --example fuzz -- [--seconds S] [--seed N] [TARGET...]
//! ```
//!
//! Targets: `goal` (GOAL text), `lossless` (the lossless text form, the same parser), `spec`
//! (the `NAME:key=value` grammar of topologies, models, noise, routings, traffic and algorithms,
//! and the units), `topology_json` (our topology schema and Ethernet tree descriptions),
//! `mapping` (mapping files on a 16-endpoint torus) and `npy` (the `.npy` reader of `lbm run
//! --init file:`). Each starts from its seed corpus `fuzz/corpus/<target>/` (small real
//! inputs) and for `S` seconds (default 30) mutates them: bit flips, random bytes, inserted,
//! deleted and duplicated runs, splices of two inputs, interesting integers in place of digits
//! (0, -1, 2^31, 2^64, nan, ...) and in binary, and tokens of the grammar. Mutants are kept in a
//! pool of 256 to be mutated further (no coverage feedback on stable).
//!
//! A run fails when the parser panics, takes more than a second, or holds more than 1 GiB (the
//! core's memory guard, `resources`, is set to refuse above 512 MiB, as `--memory-limit`
//! would): the input is written to `fuzz/crashes/<target>-<kind>-<hash>` (git-ignored) and the
//! fuzzer exits with status 1 after printing the file's name and what happened. Exit status 0:
//! every target ran clean for its time. The mutations are a pure function of `--seed` (default
//! 0), so a failure found once is found again.

use hypercuboid_core::collectives::alltoall::scheduled::parse_mapping;
use hypercuboid_core::collectives::{allreduce, alltoall, halo};
use hypercuboid_core::lbm::{read_npy, Shape};
use hypercuboid_core::model::{parse_model, parse_model_file, parse_noise, Level, Mapping};
use hypercuboid_core::network::routing::RoutingSpec;
use hypercuboid_core::network::traffic::{ExchangeSpec, TrafficSpec};
use hypercuboid_core::resources;
use hypercuboid_core::schedule::goal;
use hypercuboid_core::topology::{export, generate, parse_spec, tree, Topology};
use hypercuboid_core::units;
use std::alloc::{GlobalAlloc, Layout, System};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Bytes a run may hold at once.
const MEMORY_LIMIT: usize = 1 << 30;
/// Time one run may take.
const RUN_LIMIT: Duration = Duration::from_secs(1);
/// The longest input made.
const MAX_LEN: usize = 8192;
/// Mutants kept for further mutation.
const POOL: usize = 256;

// -- the bounds: an allocator that counts, a watchdog that times -------------------------------

/// The system allocator, counting the bytes held; past [`MEMORY_LIMIT`] it reports the input
/// being parsed and ends the process (an allocator must not unwind).
struct Counting;

static HELD: AtomicUsize = AtomicUsize::new(0);
static ARMED: AtomicBool = AtomicBool::new(false);
static REPORTING: AtomicBool = AtomicBool::new(false);
/// When the run in progress started (ms since [`epoch`]); 0: none.
static STARTED_MS: AtomicU64 = AtomicU64::new(0);
/// The target and the input of the run in progress, for a report from the allocator or the
/// watchdog.
static CURRENT: Mutex<(&str, Vec<u8>)> = Mutex::new(("", Vec::new()));

#[global_allocator]
static ALLOC: Counting = Counting;

fn over_limit(size: usize) {
    if ARMED.load(Ordering::Relaxed)
        && !REPORTING.load(Ordering::Relaxed)
        && HELD.load(Ordering::Relaxed) + size > MEMORY_LIMIT
        && !REPORTING.swap(true, Ordering::SeqCst)
    {
        let held = HELD.load(Ordering::Relaxed);
        fail_current(&format!(
            "memory: a request of {size} bytes with {held} held, over the bound of {MEMORY_LIMIT}"
        ));
    }
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters change.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        over_limit(layout.size());
        // SAFETY: as the caller promised for `layout`.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            HELD.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        over_limit(layout.size());
        // SAFETY: as the caller promised for `layout`.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            HELD.fetch_add(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        HELD.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        over_limit(new_size.saturating_sub(layout.size()));
        // SAFETY: as the caller promised.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            HELD.fetch_sub(layout.size(), Ordering::Relaxed);
            HELD.fetch_add(new_size, Ordering::Relaxed);
        }
        p
    }
}

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64 + 1
}

/// Checks every 50 ms that no run has gone on past [`RUN_LIMIT`].
fn watchdog() {
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(50));
        let started = STARTED_MS.load(Ordering::SeqCst);
        if started != 0 && now_ms().saturating_sub(started) > RUN_LIMIT.as_millis() as u64 {
            REPORTING.store(true, Ordering::SeqCst);
            fail_current(&format!("time: one run took more than {RUN_LIMIT:?}"));
        }
    });
}

fn crashes_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| PathBuf::from("fuzz/crashes"))
}

/// FNV-1a of the input: the name of its crash file.
fn hash(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Writes `data` of `target` to the crashes directory and says why; returns the file.
fn save(target: &str, kind: &str, data: &[u8]) -> PathBuf {
    let path = crashes_dir().join(format!("{target}-{kind}-{:016x}", hash(data)));
    if let Err(e) = std::fs::create_dir_all(crashes_dir()).and_then(|_| std::fs::write(&path, data))
    {
        eprintln!("fuzz: cannot write {}: {e}", path.display());
    }
    path
}

/// Reports the run in progress (from the allocator or the watchdog) and ends the process.
fn fail_current(why: &str) -> ! {
    let (target, data) = match CURRENT.lock() {
        Ok(c) => (c.0, c.1.clone()),
        Err(c) => (c.get_ref().0, c.get_ref().1.clone()),
    };
    let kind = why.split(':').next().unwrap_or("failure");
    let path = save(target, kind, &data);
    eprintln!(
        "fuzz: {target}: {why}; input ({} bytes) in {}",
        data.len(),
        path.display()
    );
    std::process::exit(1);
}

// -- the targets ----------------------------------------------------------------------------

type Run = fn(&[u8]);

/// The targets: name, the parser run on one input, grammar tokens worth inserting.
const TARGETS: &[(&str, Run, &[&str])] = &[
    (
        "goal",
        run_goal,
        &[
            "num_ranks ",
            "rank ",
            " {\n",
            "}\n",
            "send ",
            "recv ",
            "calc ",
            "b to ",
            " from ",
            " tag ",
            " requires ",
            " irequires ",
            " cpu ",
            " nic ",
            "l1: ",
            "\n",
        ],
    ),
    (
        "lossless",
        run_goal,
        &[
            "collective allreduce count ",
            " dtype int8",
            " op max",
            "name \"",
            "\\x",
            "in[",
            "out[",
            "scratch0[",
            ":",
            "]",
            " data ",
            "reduce ",
            " into ",
            " before",
            " after",
            "copy ",
            " to ",
            "sleep ",
            "1.5us",
            "µs",
            "\n",
        ],
    ),
    (
        "spec",
        run_spec,
        &[
            ":", "=", ",", "x", "us", "ns", "KiB", "GB/s", "Gb/s", "a4", "c4m2", "e2", ";", " ",
        ],
    ),
    (
        "topology_json",
        run_topology_json,
        &[
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "null",
            "true",
            "1e999",
            "-0",
            "\"dims\"",
            "\"links\"",
            "\"switches\"",
            "\"machines\"",
            "\"routers\"",
            "\"endpoints\"",
        ],
    ),
    (
        "mapping",
        run_mapping,
        &["m0", "#", "\n", " ", "15", "16", "r0"],
    ),
    (
        "npy",
        run_npy,
        &[
            "\u{93}NUMPY",
            "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2, 2, 19), }",
            "'<f4'",
            "True",
            "(",
            ")",
            ",",
            "\n",
        ],
    ),
];

fn run_goal(data: &[u8]) {
    let _ = goal::parse_reader(data, "fuzz");
}

fn run_spec(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in std::iter::once(text.as_ref()).chain(text.lines()) {
        let _ = parse_spec(line);
        let _ = parse_model(line);
        let _ = parse_noise(line);
        let _ = allreduce::Algorithm::parse(line);
        let _ = alltoall::Algorithm::parse(line);
        let _ = halo::Algorithm::parse(line);
        let _ = RoutingSpec::parse(line);
        let _ = TrafficSpec::parse(line);
        let _ = ExchangeSpec::parse(line);
        let _ = Level::parse(line);
        let _ = Mapping::parse(line);
        let _ = units::parse_size(line);
        let _ = units::parse_time(line);
        let _ = units::parse_time_f64(line);
        let _ = units::parse_bandwidth(line);
    }
}

fn run_topology_json(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = export::from_json(&text, "fuzz");
    let _ = tree::TreeDescription::from_json(&text, "fuzz");
    let _ = parse_model_file(&text);
}

fn mapping_topology() -> &'static Topology {
    static TOPO: OnceLock<Topology> = OnceLock::new();
    TOPO.get_or_init(|| generate("torus:dims=4x4").expect("a 4x4 torus"))
}

fn run_mapping(data: &[u8]) {
    let _ = parse_mapping(&String::from_utf8_lossy(data), mapping_topology());
}

fn npy_path() -> &'static Path {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        std::env::temp_dir().join(format!("hypercuboid-fuzz-{}.npy", std::process::id()))
    })
}

fn run_npy(data: &[u8]) {
    let path = npy_path();
    if std::fs::write(path, data).is_err() {
        return;
    }
    let shape = Shape::new(2, 2, 2).expect("a 2x2x2 shape");
    let mut f = vec![0.0; shape.len()];
    let _ = read_npy(&path.to_string_lossy(), &mut f, shape, [0; 3], [2, 2, 2]);
}

// -- mutations -----------------------------------------------------------------------------

/// xorshift64*: the mutations are a function of the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "-0",
    "7",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e308",
    "1e-320",
    "nan",
    "inf",
    "-inf",
    "0.5",
];

const BINARY: &[u64] = &[
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0xffff,
    0x7fff_ffff,
    0xffff_ffff,
    u64::MAX,
];

/// Replaces a run of digits (or inserts at a random place) with an interesting number.
fn number(rng: &mut Rng, data: &mut Vec<u8>) {
    let n = NUMBERS[rng.below(NUMBERS.len())].as_bytes();
    let digits: Vec<usize> = (0..data.len())
        .filter(|&i| data[i].is_ascii_digit())
        .collect();
    if digits.is_empty() {
        let at = rng.below(data.len() + 1);
        data.splice(at..at, n.iter().copied());
        return;
    }
    let start = digits[rng.below(digits.len())];
    let mut end = start;
    while end < data.len() && (data[end].is_ascii_digit() || data[end] == b'.') {
        end += 1;
    }
    data.splice(start..end, n.iter().copied());
}

/// One mutation of `data`; `other` is another input to splice with, `tokens` the grammar's.
fn mutate(rng: &mut Rng, data: &mut Vec<u8>, other: &[u8], tokens: &[&str]) {
    let len = data.len();
    match rng.below(10) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.next() as u8;
        }
        2 => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
            data.splice(at..at, bytes);
        }
        3 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(64));
            data.drain(at..at + n);
        }
        4 if len > 0 => {
            let at = rng.below(len);
            let n = 1 + rng.below((len - at).min(256));
            let run = data[at..at + n].to_vec();
            let to = rng.below(len + 1);
            data.splice(to..to, run);
        }
        5 if !other.is_empty() => {
            let cut = rng.below(len + 1);
            let from = rng.below(other.len());
            data.truncate(cut);
            data.extend_from_slice(&other[from..]);
        }
        6 | 7 => number(rng, data),
        8 if len >= 8 => {
            let v = BINARY[rng.below(BINARY.len())].to_le_bytes();
            let w = [1, 2, 4, 8][rng.below(4)];
            let at = rng.below(len - w + 1);
            data[at..at + w].copy_from_slice(&v[..w]);
        }
        _ => {
            let t = tokens[rng.below(tokens.len())].as_bytes();
            let at = rng.below(len + 1);
            data.splice(at..at, t.iter().copied());
        }
    }
    data.truncate(MAX_LEN);
}

// -- the loop -------------------------------------------------------------------------------

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = Path::new("fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

/// Runs `run` on `data` under the bounds; a panic is reported (and saved) here, the other
/// failures by the allocator and the watchdog. Returns whether it ran clean.
fn attempt(target: &'static str, run: Run, data: &[u8]) -> bool {
    {
        let mut c = CURRENT.lock().unwrap_or_else(|e| e.into_inner());
        c.0 = target;
        c.1.clear();
        c.1.extend_from_slice(data);
    }
    STARTED_MS.store(now_ms(), Ordering::SeqCst);
    ARMED.store(true, Ordering::SeqCst);
    let outcome = catch_unwind(AssertUnwindSafe(|| run(data)));
    ARMED.store(false, Ordering::SeqCst);
    STARTED_MS.store(0, Ordering::SeqCst);
    if let Err(panic) = outcome {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let place = PANIC_AT
            .lock()
            .map(|p| p.clone())
            .unwrap_or_else(|e| e.into_inner().clone());
        let path = save(target, "panic", data);
        eprintln!(
            "fuzz: {target}: panic at {place}: {what}; input ({} bytes) in {}",
            data.len(),
            path.display()
        );
        return false;
    }
    true
}

static PANIC_AT: Mutex<String> = Mutex::new(String::new());

fn fuzz(target: &'static str, run: Run, tokens: &[&str], seconds: f64, seed: u64) -> bool {
    let seeds = corpus(target);
    if seeds.is_empty() {
        eprintln!("fuzz: {target}: no seed corpus in fuzz/corpus/{target}/");
        return false;
    }
    for s in &seeds {
        if !attempt(target, run, s) {
            return false;
        }
    }
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ hash(target.as_bytes()) | 1);
    let mut pool: Vec<Vec<u8>> = Vec::with_capacity(POOL);
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let mut runs = 0u64;
    while Instant::now() < deadline {
        let from_pool = !pool.is_empty() && rng.below(2) == 0;
        let mut data = if from_pool {
            pool[rng.below(pool.len())].clone()
        } else {
            seeds[rng.below(seeds.len())].clone()
        };
        let other = seeds[rng.below(seeds.len())].clone();
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &mut data, &other, tokens);
        }
        if !attempt(target, run, &data) {
            return false;
        }
        runs += 1;
        if pool.len() < POOL {
            pool.push(data);
        } else {
            let i = rng.below(POOL);
            pool[i] = data;
        }
    }
    println!(
        "fuzz: {target}: {runs} inputs in {seconds} s from {} seeds, clean",
        seeds.len()
    );
    true
}

fn usage(msg: &str) -> ! {
    let names: Vec<&str> = TARGETS.iter().map(|t| t.0).collect();
    eprintln!(
        "fuzz: {msg}\nusage: fuzz [--seconds S] [--seed N] [TARGET...]; targets: {}",
        names.join(", ")
    );
    std::process::exit(2);
}

fn main() {
    let mut seconds = 30.0;
    let mut seed = 0u64;
    let mut wanted: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => {
                seconds = args
                    .next()
                    .and_then(|s| s.parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .unwrap_or_else(|| usage("--seconds takes a number of seconds, 0 or more"));
            }
            "--seed" => {
                seed = args
                    .next()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or_else(|| usage("--seed takes an integer from 0 to 2^64 - 1"));
            }
            t if TARGETS.iter().any(|x| x.0 == t) => wanted.push(t.to_string()),
            other => usage(&format!("unknown argument '{other}'")),
        }
    }
    std::panic::set_hook(Box::new(|info| {
        if let Ok(mut p) = PANIC_AT.lock() {
            *p = info
                .location()
                .map(|l| l.to_string())
                .unwrap_or_else(|| "an unknown place".into());
        }
    }));
    if wanted.is_empty() {
        wanted = TARGETS.iter().map(|t| t.0.to_string()).collect();
    }
    if wanted.len() > 1 {
        // one process per target: a failure that ends its process (memory, time) does not
        // keep the other targets from running
        let exe = std::env::current_exe().unwrap_or_else(|e| usage(&format!("no executable: {e}")));
        let mut failed = Vec::new();
        for t in &wanted {
            let status = std::process::Command::new(&exe)
                .args([
                    "--seconds",
                    &seconds.to_string(),
                    "--seed",
                    &seed.to_string(),
                    t,
                ])
                .status();
            if !status.map(|s| s.success()).unwrap_or(false) {
                failed.push(t.as_str());
            }
        }
        if !failed.is_empty() {
            eprintln!("fuzz: failed: {}", failed.join(", "));
            std::process::exit(1);
        }
        return;
    }
    // the core's own memory guard refuses first, at half the fuzzer's bound
    resources::set_memory_limit(Some(MEMORY_LIMIT as u64 / 2));
    epoch();
    watchdog();
    let (name, run, tokens) = *TARGETS
        .iter()
        .find(|t| t.0 == wanted[0])
        .expect("a known target");
    let clean = fuzz(name, run, tokens, seconds, seed);
    let _ = std::fs::remove_file(npy_path());
    if !clean {
        std::process::exit(1);
    }
}
